// Any bytes as deepum's configuration: the text of a DEEPUM_CONFIG file, then, after a line "--",
// DEEPUM_<KEY>=value lines that a fake getenv hands out. Loading must accept or name the problem,
// never throw or crash. DEEPUM_CONFIG itself is never handed out: the file text is given directly.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "deepum/config/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  constexpr std::string_view kSeparator = "\n--\n";
  const std::size_t split = input.find(kSeparator);
  const std::string_view file_text = input.substr(0, split);
  std::map<std::string, std::string, std::less<>> environment;
  if (split != std::string_view::npos) {
    std::string_view lines = input.substr(split + kSeparator.size());
    while (!lines.empty()) {
      const std::string_view line = lines.substr(0, lines.find('\n'));
      lines.remove_prefix(std::min(lines.size(), line.size() + 1));
      const std::size_t equals = line.find('=');
      if (equals == std::string_view::npos) continue;
      // A C string ends at its first NUL, as a real environment value does.
      const std::string value(line.substr(equals + 1));
      environment.insert_or_assign(std::string(line.substr(0, equals)), value.c_str());
    }
  }
  environment.erase("DEEPUM_CONFIG");
  const auto getenv = [&environment](const char* name) -> const char* {
    const auto found = environment.find(std::string_view(name));
    return found == environment.end() ? nullptr : found->second.c_str();
  };
  (void)deepum::config::load_config_text(file_text, "fuzz.json", getenv);
  return 0;
}
