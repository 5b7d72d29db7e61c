// Any bytes as a deepum-sim machine-model file: parse_machine_model must accept or name the
// problem, never throw or crash; and a model it accepts must read back unchanged from the JSON
// machine_model_json writes of it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "deepum/sim/machine_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace deepum::sim;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const MachineLoad load = parse_machine_model(text, "fuzz.json");
  if (!load.model) {
    if (load.error.empty()) __builtin_trap();  // a refusal always says why
    return 0;
  }
  const MachineLoad again = parse_machine_model(machine_model_json(*load.model), "again.json");
  if (!again.model || !(*again.model == *load.model)) __builtin_trap();
  return 0;
}
