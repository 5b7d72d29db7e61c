// Any bytes as the Perfetto JSON `deepum trace check` reads back: validate_perfetto_json must
// return (empty or a problem) for every input, never throw or crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "deepum/core/perfetto_writer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)deepum::core::validate_perfetto_json(text);
  return 0;
}
