// The configuration of a real process: secure execution, secure_getenv, and the warnings for
// DEEPUM_* variables deepum does not read.
#include <sys/auxv.h>
#include <unistd.h>  // environ (a GNU extension there)

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"
#include "deepum/config/printable.hpp"
#include "text.hpp"

namespace deepum::config {
namespace {

constexpr std::string_view kPrefix = "DEEPUM_";

// Variables named DEEPUM_* that the project reads besides the keys': the configuration file, the
// library `deepum run` preloads, and the Python interpreter of the demo and the tests.
constexpr std::string_view kOtherVariables[] = {"DEEPUM_CONFIG", "DEEPUM_LIBRARY", "DEEPUM_PYTHON"};

std::vector<std::string> known_variables() {
  std::vector<std::string> known(std::begin(kOtherVariables), std::end(kOtherVariables));
  for (const KeySpec& key : config_keys()) known.push_back(env_var_name(key.name));
  return known;
}

// A name as it appears in a warning: printable, and cut short if long.
std::string shown_name(std::string_view name) {
  constexpr std::size_t kMaxLength = 80;
  if (name.size() <= kMaxLength) return printable(name);
  return printable(name.substr(0, kMaxLength)) + "...";
}

ConfigLoad secure_execution_load() {
  ConfigLoad result;
  result.config.enabled = false;
  result.origin = "none (secure execution)";
  result.secure_execution = true;
  return result;
}

}  // namespace

ProcessEnvironment this_process_environment() noexcept {
  ProcessEnvironment process;
  process.secure_execution = getauxval(AT_SECURE) != 0;
  try {
    process.lookup = [](const char* name) -> const char* { return secure_getenv(name); };
    for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
      const std::string_view text = *entry;
      if (!text.starts_with(kPrefix)) continue;
      process.variable_names.emplace_back(text.substr(0, text.find('=')));
    }
  } catch (...) {
    // Only allocation can fail: without the names there are no warnings; an empty lookup fails
    // the load, which then passes every call through.
  }
  return process;
}

std::vector<std::string> unknown_variable_warnings(std::span<const std::string> names) {
  const std::vector<std::string> known = known_variables();
  std::vector<std::string_view> known_suffixes;  // compared without the prefix all of them share
  for (const std::string& variable : known)
    known_suffixes.push_back(std::string_view(variable).substr(kPrefix.size()));
  std::vector<std::string> warnings;
  for (const std::string& name : names) {
    if (!name.starts_with(kPrefix) || std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string warning =
        "deepum: environment " + shown_name(name) + ": not a variable deepum reads, ignored";
    const std::string_view closest =
        closest_name(std::string_view(name).substr(kPrefix.size()), known_suffixes);
    if (!closest.empty()) warning += " (did you mean DEEPUM_" + std::string(closest) + "?)";
    warnings.push_back(std::move(warning));
  }
  return warnings;
}

ConfigLoad load_process_config(const ProcessEnvironment& process) {
  if (process.secure_execution) return secure_execution_load();
  ConfigLoad load = load_config(process.lookup);
  try {
    for (std::string& warning : unknown_variable_warnings(process.variable_names))
      load.warnings.push_back(std::move(warning));
  } catch (...) {
    // Only allocation can fail here; the warnings are a courtesy, the configuration stands.
  }
  return load;
}

}  // namespace deepum::config
