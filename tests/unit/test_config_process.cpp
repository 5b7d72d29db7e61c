// The configuration of a whole process: no configuration at all in secure execution, and a warning
// for each DEEPUM_* variable deepum does not read.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"

namespace {

namespace cfg = deepum::config;

// A lookup that answers from a list and remembers every name it was asked for.
struct RecordingLookup {
  std::vector<std::pair<std::string, std::string>> vars;
  std::vector<std::string> asked;

  cfg::EnvLookup lookup() {
    return [this](const char* name) -> const char* {
      asked.emplace_back(name);
      for (const auto& [var, value] : vars) {
        if (var == name) return value.c_str();
      }
      return nullptr;
    };
  }
};

}  // namespace

TEST_CASE("a secure-execution process reads no configuration and passes every call through") {
  RecordingLookup env{{{"DEEPUM_CONFIG", "/etc/shadow"}, {"DEEPUM_LOG_FILE", "/etc/passwd"}}, {}};
  const cfg::ConfigLoad load =
      cfg::load_process_config({env.lookup(), {"DEEPUM_CONFIG", "DEEPUM_LOG_FILE", "DEEPUM_TYPO"}, true});
  CHECK(env.asked.empty());  // not one variable looked at
  CHECK(load.ok());
  CHECK(load.secure_execution);
  CHECK_FALSE(load.config.enabled);
  CHECK(load.config.log_file.empty());
  CHECK(load.warnings.empty());
  CHECK(load.set_keys.empty());
  CHECK(load.origin == "none (secure execution)");
}

TEST_CASE("an ordinary process reads its configuration and warns of unknown DEEPUM_ variables") {
  RecordingLookup env{{{"DEEPUM_ALLOC_LIMIT", "8GiB"}}, {}};
  const cfg::ConfigLoad load = cfg::load_process_config(
      {env.lookup(), {"DEEPUM_ALLOC_LIMIT", "DEEPUM_RESIDENT_LIMT", "DEEPUM_CONFIG"}, false});
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK_FALSE(load.secure_execution);
  CHECK(load.config.enabled);
  CHECK(load.config.alloc_limit == cfg::SizeSpec::of_bytes(std::uint64_t{8} << 30));
  CHECK_FALSE(env.asked.empty());
  REQUIRE(load.warnings.size() == 1);
  CHECK(load.warnings[0] ==
        "deepum: environment DEEPUM_RESIDENT_LIMT: not a variable deepum reads, ignored (did you mean "
        "DEEPUM_RESIDENT_LIMIT?)");
}

TEST_CASE("every variable the project reads is known; others are named with the closest known one") {
  std::vector<std::string> known{"DEEPUM_CONFIG", "DEEPUM_LIBRARY", "DEEPUM_PYTHON", "PATH", "HOME"};
  for (const cfg::KeySpec& key : cfg::config_keys()) known.push_back(cfg::env_var_name(key.name));
  CHECK(cfg::unknown_variable_warnings(known).empty());

  const std::vector<std::string> unknown{
      "DEEPUM_PREFETCH_LOOKAHED", "DEEPUM_LOG_LVL", "DEEPUM_CONFG",
      "DEEPUM_ZZZZZZZZZZZZ",      "DEEPUM_",        "DEEPUM_X\n[deepum 1 error] forged"};
  const std::vector<std::string> warnings = cfg::unknown_variable_warnings(unknown);
  REQUIRE(warnings.size() == unknown.size());
  CHECK(warnings[0].ends_with("(did you mean DEEPUM_PREFETCH_LOOKAHEAD?)"));
  CHECK(warnings[1].ends_with("(did you mean DEEPUM_LOG_LEVEL?)"));
  CHECK(warnings[2].ends_with("(did you mean DEEPUM_CONFIG?)"));
  CHECK(warnings[3] == "deepum: environment DEEPUM_ZZZZZZZZZZZZ: not a variable deepum reads, ignored");
  CHECK(warnings[4] == "deepum: environment DEEPUM_: not a variable deepum reads, ignored");
  // A name may hold any byte but '=': it is shown escaped, on one line.
  CHECK(warnings[5].starts_with(R"(deepum: environment DEEPUM_X\n[deepum 1 error] forged: not a variable)"));
  // A long name is cut short.
  const std::vector<std::string> long_name{"DEEPUM_" + std::string(5000, 'Q')};
  CHECK(cfg::unknown_variable_warnings(long_name)[0].size() < 200);
}

TEST_CASE("this process's environment: DEEPUM_ names, a working lookup, not secure execution") {
  REQUIRE(setenv("DEEPUM_TEST_PROCESS_VARIABLE", "x=y", 1) == 0);
  const cfg::ProcessEnvironment process = cfg::this_process_environment();
  unsetenv("DEEPUM_TEST_PROCESS_VARIABLE");
  CHECK_FALSE(process.secure_execution);  // the test runs as an ordinary program
  CHECK(std::find(process.variable_names.begin(), process.variable_names.end(),
                  "DEEPUM_TEST_PROCESS_VARIABLE") != process.variable_names.end());
  for (const std::string& name : process.variable_names) CHECK(name.starts_with("DEEPUM_"));
  REQUIRE(setenv("DEEPUM_TEST_PROCESS_VARIABLE", "value", 1) == 0);
  CHECK(std::string(process.lookup("DEEPUM_TEST_PROCESS_VARIABLE")) == "value");
  unsetenv("DEEPUM_TEST_PROCESS_VARIABLE");
  CHECK(process.lookup("DEEPUM_TEST_PROCESS_VARIABLE") == nullptr);
}
