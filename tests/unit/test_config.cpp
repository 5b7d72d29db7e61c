// Loading the configuration: defaults, the DEEPUM_CONFIG file, DEEPUM_<KEY> variables, their
// precedence, every kind of error message, and the key table that drives them.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"
#include "temp_directory.hpp"

namespace {

namespace cfg = deepum::config;
using cfg::Config;
using cfg::ConfigLoad;
using cfg::LogLevel;
using cfg::RemoteAccess;
using cfg::SizeSpec;
using cfg::TracingLevel;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// An environment held in a map, so tests neither read nor change the real one.
class FakeEnv {
 public:
  FakeEnv() = default;
  FakeEnv(std::initializer_list<std::pair<const std::string, std::string>> vars) : vars_(vars) {}

  void set(const std::string& name, const std::string& value) { vars_[name] = value; }

  cfg::EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      const auto found = vars_.find(name);
      return found == vars_.end() ? nullptr : found->second.c_str();
    };
  }

 private:
  std::map<std::string, std::string> vars_;
};

// A file in the temporary directory, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(std::string_view contents) {
    static int count = 0;
    path_ = (std::filesystem::temp_directory_path() /
             ("deepum_test_config_" + std::to_string(getpid()) + "_" + std::to_string(++count) + ".json"))
                .string();
    std::ofstream(path_) << contents;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void check_same(const Config& actual, const Config& expected) {
  CHECK(actual.enabled == expected.enabled);
  CHECK(actual.alloc_limit == expected.alloc_limit);
  CHECK(actual.resident_limit == expected.resident_limit);
  CHECK(actual.eviction_headroom == expected.eviction_headroom);
  CHECK(actual.mode == expected.mode);
  CHECK(actual.moves == expected.moves);
  CHECK(actual.swap_store_limit == expected.swap_store_limit);
  CHECK(actual.evictions_ahead == expected.evictions_ahead);
  CHECK(actual.tracing == expected.tracing);
  CHECK(actual.trace_file == expected.trace_file);
  CHECK(actual.cupti_library == expected.cupti_library);
  CHECK(actual.trace_flush_ms == expected.trace_flush_ms);
  CHECK(actual.trace_per_thread_buffers == expected.trace_per_thread_buffers);
  CHECK(actual.worker_interval_us == expected.worker_interval_us);
  CHECK(actual.log_level == expected.log_level);
  CHECK(actual.log_file == expected.log_file);
  CHECK(actual.stats_file == expected.stats_file);
  CHECK(actual.summary == expected.summary);
  CHECK(actual == expected);  // also covers members added later
}

// A failed load: one message, and the defaults to run with.
void check_failed(const ConfigLoad& load, std::string_view message) {
  CHECK_FALSE(load.ok());
  CHECK(load.error == message);
  check_same(load.config, Config{});
  CHECK(load.origin == "defaults");
}

ConfigLoad load_text(std::string_view json, const FakeEnv& env = {}) {
  return cfg::load_config_text(json, "/tmp/x.json", env.lookup());
}

constexpr std::string_view kEveryKeyJson = R"({
  "enabled": false,
  "alloc_limit": "64GiB",
  "resident_limit": "75%",
  "mode": "safe",
  "eviction_headroom": "1GiB",
  "swap_store_limit": "48GiB",
  "evictions_ahead": 3,
  "tracing": "launches",
  "trace_file": "/tmp/run-%p",
  "cupti_library": "/opt/cuda/lib64/libcupti.so.12",
  "trace_flush_ms": 20,
  "trace_per_thread_buffers": false,
  "worker_interval_us": 250,
  "log_level": "debug",
  "log_file": "/var/log/deepum.log",
  "stats_file": "/tmp/stats.json",
  "summary": false
})";

Config every_key_config() {
  Config config;
  config.enabled = false;
  config.alloc_limit = SizeSpec::of_bytes(64 * kGiB);
  config.resident_limit = SizeSpec::of_percent(75.0);
  config.mode = cfg::Mode::safe;
  config.moves = cfg::moves_of(cfg::Mode::safe);
  config.eviction_headroom = SizeSpec::of_bytes(kGiB);
  config.swap_store_limit = SizeSpec::of_bytes(48 * kGiB);
  config.evictions_ahead = 3;
  config.tracing = TracingLevel::launches;
  config.trace_file = "/tmp/run-%p";
  config.cupti_library = "/opt/cuda/lib64/libcupti.so.12";
  config.trace_flush_ms = 20;
  config.trace_per_thread_buffers = false;
  config.worker_interval_us = 250;
  config.log_level = LogLevel::debug;
  config.log_file = "/var/log/deepum.log";
  config.stats_file = "/tmp/stats.json";
  config.summary = false;
  return config;
}

}  // namespace

TEST_CASE("with nothing set, the defaults apply") {
  const ConfigLoad load = cfg::load_config(FakeEnv{}.lookup());
  CHECK(load.ok());
  CHECK(load.error.empty());
  CHECK(load.origin == "defaults");
  check_same(load.config, Config{});
  CHECK(load.config.enabled);
  CHECK(load.config.alloc_limit == SizeSpec::of_percent(100.0));
  CHECK(load.config.resident_limit == SizeSpec::of_bytes(0));  // automatic
  CHECK(load.config.mode == cfg::Mode::fast);
  CHECK(load.config.moves == cfg::Moves{});  // every move
  CHECK(load.warnings.empty());
  CHECK(load.config.eviction_headroom == SizeSpec::of_bytes(kGiB));
  CHECK(load.config.tracing == TracingLevel::full);
  CHECK(load.config.trace_file.empty());
  CHECK(load.config.cupti_library.empty());
  CHECK(load.config.trace_flush_ms == 5);
  CHECK(load.config.worker_interval_us == 1000);
  CHECK(load.config.log_level == LogLevel::info);
  CHECK(load.config.log_file.empty());
  CHECK(load.config.stats_file.empty());
  CHECK(load.config.summary);
}

TEST_CASE("an empty DEEPUM_CONFIG means no file") {
  const ConfigLoad load = cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", ""}}.lookup());
  CHECK(load.ok());
  CHECK(load.origin == "defaults");
}

TEST_CASE("the table's default texts are what Config holds") {
  FakeEnv env;
  for (const cfg::KeySpec& key : cfg::config_keys())
    env.set(cfg::env_var_name(key.name), std::string(key.default_text));
  const ConfigLoad load = cfg::load_config(env.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  check_same(load.config, Config{});
}

TEST_CASE("a file named by DEEPUM_CONFIG sets every key") {
  const TempFile file(kEveryKeyJson);
  const ConfigLoad load = cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", file.path()}}.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  check_same(load.config, every_key_config());
  CHECK(load.origin == "defaults + " + file.path());
}

TEST_CASE("JSON text in memory loads like a file") {
  const ConfigLoad load = load_text(kEveryKeyJson);
  REQUIRE_MESSAGE(load.ok(), load.error);
  check_same(load.config, every_key_config());
  CHECK(load.origin == "defaults + /tmp/x.json");
}

TEST_CASE("a file may set some keys; the rest keep their defaults") {
  const ConfigLoad load = load_text(R"({"alloc_limit": "8GiB"})");
  REQUIRE_MESSAGE(load.ok(), load.error);
  Config expected;
  expected.alloc_limit = SizeSpec::of_bytes(8 * kGiB);
  check_same(load.config, expected);
  CHECK(load_text("{}").ok());
}

TEST_CASE("a JSON size is a string with a unit; bytes are written with a B") {
  const ConfigLoad load =
      load_text(R"({"alloc_limit": "1073741824B", "resident_limit": "18446744073709551615B"})");
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.alloc_limit == SizeSpec::of_bytes(kGiB));
  CHECK(load.config.resident_limit == SizeSpec::of_bytes(UINT64_MAX));
  // A JSON number has no unit, so it is refused as the same digits in the environment are.
  check_failed(
      load_text(R"({"alloc_limit": 1073741824})"),
      R"(deepum: config /tmp/x.json: key "alloc_limit": expected a unit after the number, such as "1073741824MiB" or "1073741824GiB" ("1073741824B" for bytes), got 1073741824)");
}

TEST_CASE("a size without a unit in the environment is refused, not taken as bytes") {
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_ALLOC_LIMIT", "200"}}.lookup()),
      R"(deepum: environment DEEPUM_ALLOC_LIMIT="200": expected a unit after the number, such as "200MiB" or "200GiB" ("200B" for bytes))");
  const ConfigLoad bytes = cfg::load_config(FakeEnv{{"DEEPUM_ALLOC_LIMIT", "200B"}}.lookup());
  REQUIRE_MESSAGE(bytes.ok(), bytes.error);
  CHECK(bytes.config.alloc_limit == SizeSpec::of_bytes(200));
}

TEST_CASE("environment variables alone set every key") {
  const FakeEnv env{{"DEEPUM_ENABLED", "no"},
                    {"DEEPUM_ALLOC_LIMIT", "64GiB"},
                    {"DEEPUM_RESIDENT_LIMIT", "75%"},
                    {"DEEPUM_MODE", "SAFE"},
                    {"DEEPUM_EVICTION_HEADROOM", "1GiB"},
                    {"DEEPUM_SWAP_STORE_LIMIT", "48GiB"},
                    {"DEEPUM_EVICTIONS_AHEAD", "3"},
                    {"DEEPUM_TRACING", "launches"},
                    {"DEEPUM_TRACE_FILE", "/tmp/run-%p"},
                    {"DEEPUM_CUPTI_LIBRARY", "/opt/cuda/lib64/libcupti.so.12"},
                    {"DEEPUM_TRACE_FLUSH_MS", "20"},
                    {"DEEPUM_TRACE_PER_THREAD_BUFFERS", "false"},
                    {"DEEPUM_WORKER_INTERVAL_US", "250"},
                    {"DEEPUM_LOG_LEVEL", "debug"},
                    {"DEEPUM_LOG_FILE", "/var/log/deepum.log"},
                    {"DEEPUM_STATS_FILE", "/tmp/stats.json"},
                    {"DEEPUM_SUMMARY", "off"}};
  const ConfigLoad load = cfg::load_config(env.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  check_same(load.config, every_key_config());
  CHECK(load.origin ==
        "defaults + env (DEEPUM_ENABLED, DEEPUM_ALLOC_LIMIT, DEEPUM_RESIDENT_LIMIT, DEEPUM_MODE, "
        "DEEPUM_EVICTION_HEADROOM, DEEPUM_SWAP_STORE_LIMIT, DEEPUM_EVICTIONS_AHEAD, "
        "DEEPUM_TRACING, "
        "DEEPUM_TRACE_FILE, "
        "DEEPUM_CUPTI_LIBRARY, DEEPUM_TRACE_FLUSH_MS, DEEPUM_TRACE_PER_THREAD_BUFFERS, "
        "DEEPUM_WORKER_INTERVAL_US, "
        "DEEPUM_LOG_LEVEL, "
        "DEEPUM_LOG_FILE, "
        "DEEPUM_STATS_FILE, DEEPUM_SUMMARY)");
}

TEST_CASE("the environment overrides the file, key by key") {
  const TempFile file(R"({"alloc_limit": "8GiB", "log_level": "warn", "log_file": "/tmp/a.log"})");
  const FakeEnv env{{"DEEPUM_CONFIG", file.path()}, {"DEEPUM_ALLOC_LIMIT", "16GiB"}, {"DEEPUM_LOG_FILE", ""}};
  const ConfigLoad load = cfg::load_config(env.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.alloc_limit == SizeSpec::of_bytes(16 * kGiB));  // env
  CHECK(load.config.log_level == LogLevel::warn);                   // file
  CHECK(load.config.log_file.empty());                              // env, back to stderr
  CHECK(load.config.summary);                                       // default
  CHECK(load.origin == "defaults + " + file.path() + " + env (DEEPUM_ALLOC_LIMIT, DEEPUM_LOG_FILE)");
}

TEST_CASE("bool environment values") {
  const std::array<std::pair<std::string_view, bool>, 16> forms{{{"1", true},
                                                                 {"true", true},
                                                                 {"TRUE", true},
                                                                 {"yes", true},
                                                                 {"Yes", true},
                                                                 {"on", true},
                                                                 {"ON", true},
                                                                 {" true ", true},
                                                                 {"0", false},
                                                                 {"false", false},
                                                                 {"False", false},
                                                                 {"no", false},
                                                                 {"NO", false},
                                                                 {"off", false},
                                                                 {"Off", false},
                                                                 {"\tno\n", false}}};
  for (const auto& form : forms) {
    const std::string text(form.first);
    const bool value = form.second;
    CAPTURE(text);
    const ConfigLoad load =
        cfg::load_config(FakeEnv{{"DEEPUM_ENABLED", text}, {"DEEPUM_SUMMARY", text}}.lookup());
    REQUIRE_MESSAGE(load.ok(), load.error);
    CHECK(load.config.enabled == value);
    CHECK(load.config.summary == value);
  }
  for (std::string_view text : {"", "2", "y", "n", "maybe", "enabled", "true!"}) {
    CAPTURE(text);
    check_failed(cfg::load_config(FakeEnv{{"DEEPUM_SUMMARY", std::string(text)}}.lookup()),
                 "deepum: environment DEEPUM_SUMMARY=\"" + std::string(text) +
                     "\": expected one of 1, 0, true, false, yes, no, on, off");
  }
}

TEST_CASE("log levels, by name in any case, from the file and the environment") {
  const std::array levels{LogLevel::trace, LogLevel::debug, LogLevel::info,
                          LogLevel::warn,  LogLevel::error, LogLevel::off};
  const std::array<std::string_view, 6> names{"trace", "debug", "info", "warn", "error", "off"};
  for (std::size_t i = 0; i < levels.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(cfg::log_level_name(levels[i]) == names[i]);
    const ConfigLoad from_file = load_text(R"({"log_level": ")" + std::string(names[i]) + R"("})");
    REQUIRE_MESSAGE(from_file.ok(), from_file.error);
    CHECK(from_file.config.log_level == levels[i]);
    std::string upper(names[i]);
    for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
    const ConfigLoad from_env = cfg::load_config(FakeEnv{{"DEEPUM_LOG_LEVEL", upper}}.lookup());
    REQUIRE_MESSAGE(from_env.ok(), from_env.error);
    CHECK(from_env.config.log_level == levels[i]);
  }
}

TEST_CASE("a bad environment value names the variable, the value and what was expected") {
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_LOG_LEVEL", "loud"}}.lookup()),
      R"(deepum: environment DEEPUM_LOG_LEVEL="loud": expected one of trace, debug, info, warn, error, off)");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_ALLOC_LIMIT", "lots"}}.lookup()),
      R"(deepum: environment DEEPUM_ALLOC_LIMIT="lots": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%")");
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_EVICTION_HEADROOM", "0"}}.lookup()),
               R"(deepum: environment DEEPUM_EVICTION_HEADROOM="0": expected a size greater than zero)");
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_MODE", "fastest"}}.lookup()),
               R"(deepum: environment DEEPUM_MODE="fastest": expected one of fast, safe, evict, driver)");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_ALLOC_LIMIT", "-5GiB"}}.lookup()),
      R"(deepum: environment DEEPUM_ALLOC_LIMIT="-5GiB": expected a positive size, not a negative one)");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_ENABLED", "maybe"}}.lookup()),
      R"(deepum: environment DEEPUM_ENABLED="maybe": expected one of 1, 0, true, false, yes, no, on, off)");
}

TEST_CASE("a bad environment value after a good file still leaves the defaults") {
  const TempFile file(kEveryKeyJson);
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", file.path()}, {"DEEPUM_ALLOC_LIMIT", "lots"}}.lookup()),
      R"(deepum: environment DEEPUM_ALLOC_LIMIT="lots": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%")");
}

TEST_CASE("a missing or unreadable DEEPUM_CONFIG file names the file and the reason") {
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", "/nonexistent/deepum.json"}}.lookup()),
      "deepum: config /nonexistent/deepum.json: cannot read the file named by DEEPUM_CONFIG (No such "
      "file or directory)");
  const std::string directory = std::filesystem::temp_directory_path().string();
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", directory}}.lookup()),
               "deepum: config " + directory +
                   ": cannot read the file named by DEEPUM_CONFIG (a directory, not a regular file)");
}

TEST_CASE("DEEPUM_CONFIG must name a regular file of at most 1 MiB; it is never read without bound") {
  const TempDirectory directory;
  const auto error_for = [](const std::string& path) {
    return cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", path}}.lookup());
  };
  // A FIFO would block the program in deepum's constructor until someone wrote to it.
  const std::string fifo = directory / "config.fifo";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  check_failed(error_for(fifo),
               "deepum: config " + fifo +
                   ": cannot read the file named by DEEPUM_CONFIG (a FIFO, not a regular file)");
  // /dev/zero would be read until memory ran out.
  check_failed(
      error_for("/dev/zero"),
      "deepum: config /dev/zero: cannot read the file named by DEEPUM_CONFIG (a character device, not a "
      "regular file)");
  const std::string large = directory / "large.json";
  std::ofstream(large) << "{}" << std::string(cfg::kMaxConfigFileBytes - 1, ' ');
  check_failed(error_for(large),
               "deepum: config " + large +
                   ": cannot read the file named by DEEPUM_CONFIG (1048577 bytes, more than the "
                   "1048576 a file may hold here)");
  const std::string largest = directory / "largest.json";
  std::ofstream(largest) << "{}" << std::string(cfg::kMaxConfigFileBytes - 2, ' ');
  CHECK(error_for(largest).ok());
}

TEST_CASE("DEEPUM_CONFIG may name a symbolic link to a configuration file") {
  // Reading through a link changes nothing; a secure-execution process reads no configuration at all.
  const TempDirectory directory;
  const std::string target = directory / "deepum.json";
  std::ofstream(target) << R"({"alloc_limit": "8GiB"})";
  const std::string link = directory / "link.json";
  REQUIRE(symlink(target.c_str(), link.c_str()) == 0);
  const ConfigLoad load = cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", link}}.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.alloc_limit == SizeSpec::of_bytes(8 * kGiB));
}

TEST_CASE("each key records where its value came from") {
  const TempFile file(R"({"alloc_limit": "8GiB", "log_level": "warn", "prefetch": {"rows": 512}})");
  const FakeEnv env{
      {"DEEPUM_CONFIG", file.path()}, {"DEEPUM_ALLOC_LIMIT", "16GiB"}, {"DEEPUM_SUMMARY", "true"}};
  const ConfigLoad load = cfg::load_config(env.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.origin_of("alloc_limit").origin == cfg::Origin::environment);
  CHECK(load.origin_of("alloc_limit").where == "DEEPUM_ALLOC_LIMIT");
  CHECK(load.origin_of("log_level").origin == cfg::Origin::file);
  CHECK(load.origin_of("log_level").where == file.path());
  CHECK(load.origin_of("prefetch.rows").origin == cfg::Origin::file);   // a deprecated key's too
  CHECK(load.origin_of("summary").origin == cfg::Origin::environment);  // set, though to its default
  CHECK(load.origin_of("tracing").origin == cfg::Origin::default_value);
  CHECK(load.origin_of("tracing").where.empty());
  CHECK(load.set_keys.size() == 4);
  // A failed load runs on the defaults, so nothing came from anywhere else.
  CHECK(cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", file.path()}, {"DEEPUM_TRACING", "x"}}.lookup())
            .set_keys.empty());
}

TEST_CASE("an error message is one line, whatever the value held") {
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_LOG_LEVEL", "info\n[deepum 1 error] forged"}}.lookup()),
      R"(deepum: environment DEEPUM_LOG_LEVEL="info\n[deepum 1 error] forged": expected one of trace, )"
      R"(debug, info, warn, error, off)");
  const std::string long_value(500, 'x');
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_TRACING", long_value}}.lookup()),
               "deepum: environment DEEPUM_TRACING=\"" + std::string(60, 'x') +
                   "...\": expected one of off, launches, kernels, full");
  const ConfigLoad file_error =
      cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", "/nonexistent/a\x1b[2Jb.json"}}.lookup());
  CHECK(file_error.error.find('\x1b') == std::string::npos);
  CHECK(file_error.error.find("a\\x1b[2Jb.json") != std::string::npos);
}

TEST_CASE("a JSON syntax error gives the file, line and column") {
  const TempFile file("{\n  \"alloc_limit\": \"8GiB\",\n  oops\n}\n");
  const ConfigLoad load = cfg::load_config(FakeEnv{{"DEEPUM_CONFIG", file.path()}}.lookup());
  CHECK(load.error.starts_with("deepum: config " + file.path() +
                               " line 3, column 3: syntax error while parsing"));
  check_failed(load, load.error);

  check_failed(
      load_text(R"({"summary": true,})"),
      "deepum: config /tmp/x.json line 1, column 18: syntax error while parsing object key - unexpected "
      "'}'; expected string literal");
  CHECK(load_text("").error.starts_with("deepum: config /tmp/x.json line 1, column 1: syntax error"));
  CHECK(load_text("{\"summary\": true\n")
            .error.starts_with("deepum: config /tmp/x.json line 2, column 1: syntax error"));
  CHECK(
      load_text("{}\n\n  x").error.starts_with("deepum: config /tmp/x.json line 3, column 3: syntax error"));
  // Columns count characters: "é" is two bytes.
  CHECK(load_text("{\"log_file\": \"é\" x}")
            .error.starts_with("deepum: config /tmp/x.json line 1, column 18:"));
}

TEST_CASE("the top level must be an object") {
  check_failed(
      load_text(R"(["alloc_limit", "8GiB"])"),
      R"(deepum: config /tmp/x.json: the top level must be a JSON object such as {"alloc_limit": "8GiB"}, got ["alloc_limit","8GiB"])");
  check_failed(
      load_text("42"),
      R"(deepum: config /tmp/x.json: the top level must be a JSON object such as {"alloc_limit": "8GiB"}, got 42)");
}

TEST_CASE("an unknown key names the closest known key") {
  check_failed(load_text(R"({"alloc_limt": "8GiB"})"),
               R"(deepum: config /tmp/x.json: unknown key "alloc_limt" (did you mean "alloc_limit"?))");
  check_failed(load_text(R"({"log-level": "info"})"),
               R"(deepum: config /tmp/x.json: unknown key "log-level" (did you mean "log_level"?))");
  check_failed(load_text(R"({"Summary": true})"),
               R"(deepum: config /tmp/x.json: unknown key "Summary" (did you mean "summary"?))");
  check_failed(load_text(R"({"residentlimit": "1GiB"})"),
               R"(deepum: config /tmp/x.json: unknown key "residentlimit" (did you mean "resident_limit"?))");
}

TEST_CASE("an unknown key with nothing close lists the keys") {
  constexpr const char* kAllKeys =
      "enabled, alloc_limit, resident_limit, mode, eviction_headroom, swap_store_limit, evictions_ahead, "
      "learn_loop, "
      "tracing, trace_file, cupti_library, "
      "trace_flush_ms, trace_per_thread_buffers, worker_interval_us, log_level, log_file, stats_file, "
      "summary";
  check_failed(
      load_text(R"({"summary": true, "frobnicate": 1})"),
      std::string("deepum: config /tmp/x.json: unknown key \"frobnicate\" (the keys are ") + kAllKeys + ")");
  // A section deepum does not have is an unknown key too.
  check_failed(
      load_text(R"({"offload": {"lookahead": 32}})"),
      std::string("deepum: config /tmp/x.json: unknown key \"offload\" (the keys are ") + kAllKeys + ")");
}

TEST_CASE("the prefetch section is still read, checked as before, and said to be no longer read") {
  const ConfigLoad load = load_text(R"({"prefetch": {"lookahead": 64, "pre_evict": false, "rows": 512}})");
  REQUIRE(load.ok());
  CHECK(load.config.moves == cfg::moves_of(cfg::Mode::fast));  // nothing else changes
  CHECK(load.warnings ==
        std::vector<std::string>{
            "deepum: config /tmp/x.json: key \"prefetch.lookahead\": no longer read: it tuned the "
            "correlation prefetcher, whose moves are the engine's (mode)",
            "deepum: config /tmp/x.json: key \"prefetch.pre_evict\": no longer read: it tuned the "
            "correlation prefetcher, whose moves are the engine's (mode)",
            "deepum: config /tmp/x.json: key \"prefetch.rows\": no longer read: it tuned the "
            "correlation prefetcher, whose moves are the engine's (mode)"});
  check_failed(
      load_text(R"({"prefetch": {"lookahed": 64}})"),
      R"(deepum: config /tmp/x.json: unknown key "prefetch.lookahed" (did you mean "prefetch.lookahead"?))");
  check_failed(
      load_text(R"({"prefetch": {"lookahead": 0}})"),
      R"(deepum: config /tmp/x.json: key "prefetch.lookahead": expected a whole number from 1 to 4096, got 0)");
}

TEST_CASE("a value of the wrong type names the key, the value and what was expected") {
  check_failed(
      load_text(R"({"alloc_limit": "lots"})"),
      R"(deepum: config /tmp/x.json: key "alloc_limit": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", got "lots")");
  check_failed(
      load_text(R"({"alloc_limit": true})"),
      R"(deepum: config /tmp/x.json: key "alloc_limit": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", got true)");
  check_failed(
      load_text(R"({"alloc_limit": 1.5})"),
      R"(deepum: config /tmp/x.json: key "alloc_limit": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", got 1.5)");
  check_failed(
      load_text(R"({"alloc_limit": {"bytes": 5}})"),
      R"(deepum: config /tmp/x.json: key "alloc_limit": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", got {"bytes":5})");
  check_failed(
      load_text(R"({"alloc_limit": -5})"),
      R"(deepum: config /tmp/x.json: key "alloc_limit": expected a positive size, not a negative one, got -5)");
  check_failed(
      load_text(R"({"resident_limit": "0%"})"),
      R"(deepum: config /tmp/x.json: key "resident_limit": expected a percentage above 0% and at most 10000%, got "0%")");
  check_failed(
      load_text(R"({"resident_limit": "20000%"})"),
      R"(deepum: config /tmp/x.json: key "resident_limit": expected a percentage above 0% and at most 10000%, got "20000%")");
  check_failed(
      load_text(R"({"resident_limit": "17179869184GiB"})"),
      R"(deepum: config /tmp/x.json: key "resident_limit": expected a size below 16EiB (2^64 bytes), got "17179869184GiB")");
  check_failed(load_text(R"({"enabled": "yes"})"),
               R"(deepum: config /tmp/x.json: key "enabled": expected true or false, got "yes")");
  check_failed(load_text(R"({"summary": 1})"),
               R"(deepum: config /tmp/x.json: key "summary": expected true or false, got 1)");
  check_failed(
      load_text(R"({"log_level": "loud"})"),
      R"(deepum: config /tmp/x.json: key "log_level": expected one of trace, debug, info, warn, error, off, got "loud")");
  check_failed(
      load_text(R"({"log_level": 3})"),
      R"(deepum: config /tmp/x.json: key "log_level": expected one of trace, debug, info, warn, error, off, got 3)");
  check_failed(load_text(R"({"log_file": null})"),
               R"(deepum: config /tmp/x.json: key "log_file": expected a string, got null)");
  check_failed(load_text(R"({"stats_file": ["a"]})"),
               R"(deepum: config /tmp/x.json: key "stats_file": expected a string, got ["a"])");
}

TEST_CASE("swap_store_limit takes a size, or 0 for automatic") {
  const std::array<std::pair<std::string_view, SizeSpec>, 6> accepted{{
      {"0", SizeSpec::of_bytes(0)},
      {"0GiB", SizeSpec::of_bytes(0)},
      {" 0.0 MiB ", SizeSpec::of_bytes(0)},
      {"48GiB", SizeSpec::of_bytes(48 * kGiB)},
      {"512MiB", SizeSpec::of_bytes(512 * kMiB)},
      {"50%", SizeSpec::of_percent(50.0)},
  }};
  for (const auto& text_and_size : accepted) {
    const std::string text(text_and_size.first);
    CAPTURE(text);
    const ConfigLoad from_env = cfg::load_config(FakeEnv{{"DEEPUM_SWAP_STORE_LIMIT", text}}.lookup());
    REQUIRE_MESSAGE(from_env.ok(), from_env.error);
    CHECK(from_env.config.swap_store_limit == text_and_size.second);
    const ConfigLoad from_file = load_text(R"({"swap_store_limit": ")" + text + R"("})");
    REQUIRE_MESSAGE(from_file.ok(), from_file.error);
    CHECK(from_file.config.swap_store_limit == text_and_size.second);
  }
  const ConfigLoad zero_number = load_text(R"({"swap_store_limit": 0})");
  REQUIRE_MESSAGE(zero_number.ok(), zero_number.error);
  CHECK(zero_number.config.swap_store_limit == SizeSpec::of_bytes(0));
  check_failed(
      load_text(R"({"swap_store_limit": 1073741824})"),
      R"(deepum: config /tmp/x.json: key "swap_store_limit": expected a unit after the number, such as "1073741824MiB" or "1073741824GiB" ("1073741824B" for bytes), got 1073741824)");
  // Zero stays refused where a key gives it no meaning.
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_EVICTION_HEADROOM", "0"}}.lookup()),
               R"(deepum: environment DEEPUM_EVICTION_HEADROOM="0": expected a size greater than zero)");
}

TEST_CASE("a bad swap_store_limit names the key and what was expected") {
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_SWAP_STORE_LIMIT", "lots"}}.lookup()),
      R"(deepum: environment DEEPUM_SWAP_STORE_LIMIT="lots": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", or 0 (automatic))");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_SWAP_STORE_LIMIT", "auto"}}.lookup()),
      R"(deepum: environment DEEPUM_SWAP_STORE_LIMIT="auto": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", or 0 (automatic))");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_SWAP_STORE_LIMIT", "-1GiB"}}.lookup()),
      R"(deepum: environment DEEPUM_SWAP_STORE_LIMIT="-1GiB": expected a positive size, not a negative one)");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_SWAP_STORE_LIMIT", "0%"}}.lookup()),
      R"(deepum: environment DEEPUM_SWAP_STORE_LIMIT="0%": expected a percentage above 0% and at most 10000%)");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_SWAP_STORE_LIMIT", "0.0001KiB"}}.lookup()),
      R"(deepum: environment DEEPUM_SWAP_STORE_LIMIT="0.0001KiB": expected 0 or a size of at least one byte)");
  check_failed(
      load_text(R"({"swap_store_limit": "lots"})"),
      R"(deepum: config /tmp/x.json: key "swap_store_limit": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", or 0 (automatic), got "lots")");
  check_failed(
      load_text(R"({"swap_store_limit": true})"),
      R"(deepum: config /tmp/x.json: key "swap_store_limit": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", or 0 (automatic), got true)");
  check_failed(
      load_text(R"({"swap_store_limit": -5})"),
      R"(deepum: config /tmp/x.json: key "swap_store_limit": expected a positive size, not a negative one, got -5)");
  check_failed(load_text(R"({"stream_ordered_swap": "yes"})"),
               R"(deepum: config /tmp/x.json: key "stream_ordered_swap": expected true or false, got "yes")");
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_STREAM_ORDERED_SWAP", "maybe"}}.lookup()),
      R"(deepum: environment DEEPUM_STREAM_ORDERED_SWAP="maybe": expected one of 1, 0, true, false, yes, no, on, off)");
}

TEST_CASE("an error after good keys still leaves every default") {
  check_failed(
      load_text(R"({"enabled": false, "alloc_limit": "8GiB", "log_level": "loud"})"),
      R"(deepum: config /tmp/x.json: key "log_level": expected one of trace, debug, info, warn, error, off, got "loud")");
}

TEST_CASE("a long bad value is cut short in the message") {
  const std::string long_value(500, 'x');
  const ConfigLoad load = load_text(R"({"alloc_limit": ")" + long_value + R"("})");
  CHECK_FALSE(load.ok());
  CHECK(load.error.ends_with(R"(, got ")" + std::string(59, 'x') + "..."));
}

TEST_CASE("nothing escapes as an exception") {
  const cfg::EnvLookup throwing = [](const char*) -> const char* { throw std::runtime_error("env broke"); };
  const ConfigLoad thrown = cfg::load_config(throwing);
  CHECK(thrown.error == "deepum: config: internal error: env broke");
  check_same(thrown.config, Config{});
  CHECK_FALSE(cfg::load_config(cfg::EnvLookup{}).ok());  // std::bad_function_call
  CHECK_FALSE(cfg::load_config_text("{}", "x.json", cfg::EnvLookup{}).ok());
}

TEST_CASE("environment variable names come from the dotted key") {
  CHECK(cfg::env_var_name("alloc_limit") == "DEEPUM_ALLOC_LIMIT");
  CHECK(cfg::env_var_name("prefetch.lookahead") == "DEEPUM_PREFETCH_LOOKAHEAD");
  for (const cfg::KeySpec& key : cfg::config_keys()) CHECK(cfg::env_var_name(key.name) != "DEEPUM_CONFIG");
}

TEST_CASE("the Markdown table has a row for every key") {
  const std::string table = cfg::keys_markdown_table();
  CHECK(table.starts_with("| key | type | default | environment | description |\n|-----|"));
  CHECK(table.find("| `alloc_limit` | size | `100%` | `DEEPUM_ALLOC_LIMIT` | ") != std::string::npos);
  CHECK(table.find("| `log_file` | string | `\"\"` | `DEEPUM_LOG_FILE` | ") != std::string::npos);
  CHECK(table.find("| `log_level` | log level | `info` | `DEEPUM_LOG_LEVEL` | ") != std::string::npos);
  CHECK(table.find("| `enabled` | bool | `true` | `DEEPUM_ENABLED` | ") != std::string::npos);
  CHECK(table.find("| `tracing` | tracing level | `full` | `DEEPUM_TRACING` | ") != std::string::npos);
  CHECK(table.find("| `trace_flush_ms` | whole number, 1 to 1000 | `5` | `DEEPUM_TRACE_FLUSH_MS` | ") !=
        std::string::npos);
  CHECK(table.find("| `worker_interval_us` | whole number, 50 to 100000 | `1000` | "
                   "`DEEPUM_WORKER_INTERVAL_US` | ") != std::string::npos);
  CHECK(table.find("| `eviction_headroom` | size | `1GiB` | `DEEPUM_EVICTION_HEADROOM` | ") !=
        std::string::npos);
  CHECK(table.find("| `mode` | mode | `fast` | `DEEPUM_MODE` | ") != std::string::npos);
  CHECK(table.find("| `resident_limit` | size or 0 (automatic) | `0` | `DEEPUM_RESIDENT_LIMIT` | ") !=
        std::string::npos);
  CHECK(table.find("stream_ordered_") == std::string::npos);  // deprecated: a table of their own
  CHECK(table.find("| `swap_store_limit` | size or 0 (automatic) | `0` | `DEEPUM_SWAP_STORE_LIMIT` | ") !=
        std::string::npos);
  std::size_t rows = 0;
  for (char c : table) rows += c == '\n' ? 1 : 0;
  std::size_t deprecated = 0;
  for (const cfg::KeySpec& key : cfg::config_keys()) deprecated += key.deprecated() ? 1u : 0u;
  CHECK(rows == cfg::config_keys().size() - deprecated + 2);
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    if (key.deprecated()) continue;
    CAPTURE(key.name);
    std::string name_cell = "| `";
    name_cell.append(key.name).append("` |");
    std::string env_cell = "`";
    env_cell.append(cfg::env_var_name(key.name)).append("`");
    CHECK(table.find(name_cell) != std::string::npos);
    CHECK(table.find(env_cell) != std::string::npos);
    CHECK(table.find(std::string(key.description)) != std::string::npos);
  }
}

TEST_CASE("the tracing and trace keys, their defaults and their environment variables") {
  const std::array<std::pair<std::string_view, std::string_view>, 9> keys{{
      {"eviction_headroom", "DEEPUM_EVICTION_HEADROOM"},
      {"mode", "DEEPUM_MODE"},
      {"evictions_ahead", "DEEPUM_EVICTIONS_AHEAD"},
      {"swap_store_limit", "DEEPUM_SWAP_STORE_LIMIT"},
      {"tracing", "DEEPUM_TRACING"},
      {"trace_file", "DEEPUM_TRACE_FILE"},
      {"cupti_library", "DEEPUM_CUPTI_LIBRARY"},
      {"trace_flush_ms", "DEEPUM_TRACE_FLUSH_MS"},
      {"worker_interval_us", "DEEPUM_WORKER_INTERVAL_US"},
  }};
  for (const auto& key_and_var : keys) {
    const std::string_view name = key_and_var.first;
    const std::string_view var = key_and_var.second;
    CAPTURE(name);
    CHECK(cfg::env_var_name(name) == var);
    bool found = false;
    for (const cfg::KeySpec& key : cfg::config_keys()) found = found || key.name == name;
    CHECK(found);
  }
  const Config config;
  CHECK(config.eviction_headroom == SizeSpec::of_bytes(kGiB));
  CHECK(config.mode == cfg::Mode::fast);
  CHECK(config.evictions_ahead == 1);
  CHECK(config.swap_store_limit == SizeSpec::of_bytes(0));  // automatic
  CHECK(config.tracing == TracingLevel::full);
  CHECK(config.trace_file.empty());
  CHECK(config.cupti_library.empty());
  CHECK(config.trace_flush_ms == 5);
  CHECK(config.worker_interval_us == 1000);
  // "%p" is left for the library to replace by the process id.
  const ConfigLoad load = cfg::load_config(FakeEnv{{"DEEPUM_TRACE_FILE", "/tmp/t-%p"}}.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.trace_file == "/tmp/t-%p");
}

TEST_CASE("remote access modes are still read by name, a wrong one named in the error") {
  const std::array modes{RemoteAccess::off, RemoteAccess::mapped, RemoteAccess::on_fault};
  const std::array<std::string_view, 3> names{"off", "mapped", "on_fault"};
  for (std::size_t i = 0; i < modes.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(cfg::remote_access_name(modes[i]) == names[i]);
    const ConfigLoad from_file = load_text(R"({"remote_access": ")" + std::string(names[i]) + R"("})");
    REQUIRE_MESSAGE(from_file.ok(), from_file.error);
    CHECK(from_file.config.deprecated.remote_access == modes[i]);
    CHECK(from_file.warnings ==
          std::vector<std::string>{
              "deepum: config /tmp/x.json: key \"remote_access\": no longer read: it needed "
              "the correlation prefetcher, whose moves are the engine's (mode)"});
  }
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_REMOTE_ACCESS", "true"}}.lookup()),
               R"(deepum: environment DEEPUM_REMOTE_ACCESS="true": expected one of off, mapped, on_fault)");
  check_failed(
      load_text(R"({"remote_access": false})"),
      R"(deepum: config /tmp/x.json: key "remote_access": expected one of off, mapped, on_fault, got false)");
}

TEST_CASE("tracing levels, by name in any case, from the file and the environment") {
  const std::array levels{TracingLevel::off, TracingLevel::launches, TracingLevel::kernels,
                          TracingLevel::full};
  const std::array<std::string_view, 4> names{"off", "launches", "kernels", "full"};
  for (std::size_t i = 0; i < levels.size(); ++i) {
    CAPTURE(names[i]);
    CHECK(cfg::tracing_level_name(levels[i]) == names[i]);
    const ConfigLoad from_file = load_text(R"({"tracing": ")" + std::string(names[i]) + R"("})");
    REQUIRE_MESSAGE(from_file.ok(), from_file.error);
    CHECK(from_file.config.tracing == levels[i]);
    std::string upper(names[i]);
    for (char& c : upper) c = static_cast<char>(c - 'a' + 'A');
    const ConfigLoad from_env = cfg::load_config(FakeEnv{{"DEEPUM_TRACING", " " + upper + "\n"}}.lookup());
    REQUIRE_MESSAGE(from_env.ok(), from_env.error);
    CHECK(from_env.config.tracing == levels[i]);
  }
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_TRACING", "verbose"}}.lookup()),
      R"(deepum: environment DEEPUM_TRACING="verbose": expected one of off, launches, kernels, full)");
  check_failed(cfg::load_config(FakeEnv{{"DEEPUM_TRACING", ""}}.lookup()),
               R"(deepum: environment DEEPUM_TRACING="": expected one of off, launches, kernels, full)");
  check_failed(
      load_text(R"({"tracing": "launch"})"),
      R"(deepum: config /tmp/x.json: key "tracing": expected one of off, launches, kernels, full, got "launch")");
  check_failed(
      load_text(R"({"tracing": 2})"),
      R"(deepum: config /tmp/x.json: key "tracing": expected one of off, launches, kernels, full, got 2)");
  check_failed(
      load_text(R"({"tracing": false})"),
      R"(deepum: config /tmp/x.json: key "tracing": expected one of off, launches, kernels, full, got false)");
}

TEST_CASE("whole numbers within the key's range, from the file") {
  const ConfigLoad low = load_text(R"({"trace_flush_ms": 1, "worker_interval_us": 50})");
  REQUIRE_MESSAGE(low.ok(), low.error);
  CHECK(low.config.trace_flush_ms == 1);
  CHECK(low.config.worker_interval_us == 50);
  const ConfigLoad high = load_text(R"({"trace_flush_ms": 1000, "worker_interval_us": 100000})");
  REQUIRE_MESSAGE(high.ok(), high.error);
  CHECK(high.config.trace_flush_ms == 1000);
  CHECK(high.config.worker_interval_us == 100000);

  // Only an integer number: no fraction (not even .0), exponent, sign, string or other type.
  const std::array<std::pair<std::string_view, std::string_view>, 13> rejected{{
      {"0", "0"},
      {"1001", "1001"},
      {"4294967296", "4294967296"},
      {"18446744073709551615", "18446744073709551615"},
      {"-1", "-1"},
      {"1.5", "1.5"},
      {"5.0", "5.0"},
      {"1e2", "100.0"},
      {R"("5")", R"("5")"},
      {"true", "true"},
      {"null", "null"},
      {"[5]", "[5]"},
      {R"({"ms": 5})", R"({"ms":5})"},
  }};
  for (const auto& json_and_shown : rejected) {
    const std::string_view json = json_and_shown.first;
    const std::string_view shown = json_and_shown.second;
    CAPTURE(json);
    check_failed(
        load_text(R"({"trace_flush_ms": )" + std::string(json) + "}"),
        R"(deepum: config /tmp/x.json: key "trace_flush_ms": expected a whole number from 1 to 1000, got )" +
            std::string(shown));
  }
  check_failed(
      load_text(R"({"worker_interval_us": 49})"),
      R"(deepum: config /tmp/x.json: key "worker_interval_us": expected a whole number from 50 to 100000, got 49)");
  check_failed(
      load_text(R"({"worker_interval_us": 100001})"),
      R"(deepum: config /tmp/x.json: key "worker_interval_us": expected a whole number from 50 to 100000, got 100001)");
}

TEST_CASE("whole numbers within the key's range, from the environment") {
  const std::array<std::pair<std::string_view, std::uint32_t>, 6> accepted{{
      {"1", 1},
      {"1000", 1000},
      {"42", 42},
      {" 7 ", 7},
      {"\t12\n", 12},
      {"0010", 10},
  }};
  for (const auto& text_and_value : accepted) {
    const std::string_view text = text_and_value.first;
    const std::uint32_t value = text_and_value.second;
    CAPTURE(text);
    const ConfigLoad load = cfg::load_config(FakeEnv{{"DEEPUM_TRACE_FLUSH_MS", std::string(text)}}.lookup());
    REQUIRE_MESSAGE(load.ok(), load.error);
    CHECK(load.config.trace_flush_ms == value);
    CHECK(load.origin == "defaults + env (DEEPUM_TRACE_FLUSH_MS)");
  }
  for (std::string_view text : {"", " ", "0", "000", "1001", "-1", "+5", "1.5", "5.0", "1e3", "5ms", "0x10",
                                "1 000", "five", "4294967296", "4294967301", "99999999999999999999999999"}) {
    CAPTURE(text);
    check_failed(cfg::load_config(FakeEnv{{"DEEPUM_TRACE_FLUSH_MS", std::string(text)}}.lookup()),
                 "deepum: environment DEEPUM_TRACE_FLUSH_MS=\"" + std::string(text) +
                     "\": expected a whole number from 1 to 1000");
  }
  const ConfigLoad worker = cfg::load_config(FakeEnv{{"DEEPUM_WORKER_INTERVAL_US", "100000"}}.lookup());
  REQUIRE_MESSAGE(worker.ok(), worker.error);
  CHECK(worker.config.worker_interval_us == 100000);
  check_failed(
      cfg::load_config(FakeEnv{{"DEEPUM_WORKER_INTERVAL_US", "10"}}.lookup()),
      R"(deepum: environment DEEPUM_WORKER_INTERVAL_US="10": expected a whole number from 50 to 100000)");
}

TEST_CASE("a whole-number key without a range takes any std::uint32_t") {
  constexpr std::array kUnbounded{
      cfg::KeySpec{"count", "5", "Any count.", cfg::field<&Config::trace_flush_ms>()},
  };
  const auto load_env = [&](std::string text) {
    return cfg::load_config(FakeEnv{{"DEEPUM_COUNT", std::move(text)}}.lookup(), kUnbounded);
  };
  CHECK(load_env("0").config.trace_flush_ms == 0);
  CHECK(load_env("4294967295").config.trace_flush_ms == 4294967295U);
  check_failed(
      load_env("4294967296"),
      R"(deepum: environment DEEPUM_COUNT="4294967296": expected a whole number from 0 to 4294967295)");
  const ConfigLoad from_file =
      cfg::load_config_text(R"({"count": 4294967295})", "/tmp/u.json", FakeEnv{}.lookup(), kUnbounded);
  REQUIRE_MESSAGE(from_file.ok(), from_file.error);
  CHECK(from_file.config.trace_flush_ms == 4294967295U);
  check_failed(
      cfg::load_config_text(R"({"count": 4294967296})", "/tmp/u.json", FakeEnv{}.lookup(), kUnbounded),
      R"(deepum: config /tmp/u.json: key "count": expected a whole number from 0 to 4294967295, got 4294967296)");
  CHECK(cfg::keys_markdown_table(kUnbounded).find("| `count` | whole number | `5` | `DEEPUM_COUNT` |") !=
        std::string::npos);
}

TEST_CASE("every whole-number key declares a range that holds its default; no other key has one") {
  const Config defaults;
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    CAPTURE(key.name);
    const bool whole_number = std::holds_alternative<cfg::FieldOf<std::uint32_t>>(key.field);
    CHECK(key.range.has_value() == whole_number);
    if (!whole_number || !key.range) continue;
    CHECK(key.range->min <= key.range->max);
    Config copy = defaults;
    const std::uint32_t value = std::get<cfg::FieldOf<std::uint32_t>>(key.field)(copy);
    CHECK(key.range->min <= value);
    CHECK(value <= key.range->max);
  }
}

TEST_CASE("only size keys give zero a meaning") {
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    CAPTURE(key.name);
    if (!key.zero_means.empty()) CHECK(std::holds_alternative<cfg::FieldOf<SizeSpec>>(key.field));
  }
}

TEST_CASE("key_value_text writes each value as the table's default texts do, and reads back") {
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    CAPTURE(key.name);
    CHECK(cfg::key_value_text(key, Config{}) == key.default_text);
  }
  const Config config = every_key_config();
  FakeEnv env;
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    env.set(cfg::env_var_name(key.name), cfg::key_value_text(key, config));
  }
  const ConfigLoad load = cfg::load_config(env.lookup());
  REQUIRE_MESSAGE(load.ok(), load.error);
  check_same(load.config, config);
}

#ifdef DEEPUM_SOURCE_DIR
TEST_CASE("docs/configuration.md documents every key, with the table the code generates") {
  const std::filesystem::path path = std::filesystem::path(DEEPUM_SOURCE_DIR) / "docs" / "configuration.md";
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot read ", path.string());
  const std::string docs((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    CAPTURE(key.name);
    // Appended, not "`" + name: GCC 12 at -O3 warns falsely (-Wrestrict) on operator+(const char*, string&&).
    std::string quoted = "`";
    quoted.append(key.name).append("`");
    CHECK(docs.find(quoted) != std::string::npos);
  }
  // Regenerate the table with `deepum config --markdown` (or keys_markdown_table()) when a key changes.
  CHECK_MESSAGE(docs.find(cfg::keys_markdown_table()) != std::string::npos,
                "docs/configuration.md's keys table differs from keys_markdown_table()");
  CHECK_MESSAGE(
      docs.find(cfg::deprecated_keys_markdown_table()) != std::string::npos,
      "docs/configuration.md's deprecated keys table differs from deprecated_keys_markdown_table()");
}
#endif

// A table with nested sections, standing in for later ones: adding rows is all
// it takes for the file, the environment and the docs to know the keys.
namespace {

constexpr std::array kNestedKeys{
    cfg::KeySpec{"enabled", "true", "On or off.", cfg::field<&Config::enabled>()},
    cfg::KeySpec{"limits.alloc", "100%", "Allocation limit.", cfg::field<&Config::alloc_limit>()},
    cfg::KeySpec{"limits.gpu.resident", "100%", "Residency limit.", cfg::field<&Config::resident_limit>()},
};

ConfigLoad load_nested(std::string_view json, const FakeEnv& env = {}) {
  return cfg::load_config_text(json, "/tmp/n.json", env.lookup(), kNestedKeys);
}

struct Inner {
  int value = 0;
};
struct Outer {
  Inner inner;
};

}  // namespace

TEST_CASE("nested sections are read from nested JSON objects") {
  const ConfigLoad load = load_nested(R"({"limits": {"alloc": "1GiB", "gpu": {"resident": "2GiB"}}})");
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.alloc_limit == SizeSpec::of_bytes(kGiB));
  CHECK(load.config.resident_limit == SizeSpec::of_bytes(2 * kGiB));
  CHECK(load_nested(R"({"limits": {}})").ok());
}

TEST_CASE("nested keys come from DEEPUM_SECTION_KEY variables, over the file") {
  const FakeEnv env{{"DEEPUM_LIMITS_GPU_RESIDENT", "50%"}};
  const ConfigLoad load = load_nested(R"({"limits": {"gpu": {"resident": "2GiB"}}})", env);
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.resident_limit == SizeSpec::of_percent(50.0));
  CHECK(load.origin == "defaults + /tmp/n.json + env (DEEPUM_LIMITS_GPU_RESIDENT)");
  const ConfigLoad from_env_only = cfg::load_config(env.lookup(), kNestedKeys);
  CHECK(from_env_only.config.resident_limit == SizeSpec::of_percent(50.0));
  check_failed(
      load_nested("{}", FakeEnv{{"DEEPUM_LIMITS_ALLOC", "lots"}}),
      R"(deepum: environment DEEPUM_LIMITS_ALLOC="lots": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%")");
}

TEST_CASE("nested errors name the dotted key") {
  check_failed(load_nested(R"({"limits": {"aloc": "1GiB"}})"),
               R"(deepum: config /tmp/n.json: unknown key "limits.aloc" (did you mean "limits.alloc"?))");
  check_failed(
      load_nested(R"({"limits": {"gpu": {"residnt": "1GiB"}}})"),
      R"(deepum: config /tmp/n.json: unknown key "limits.gpu.residnt" (did you mean "limits.gpu.resident"?))");
  check_failed(load_nested(R"({"limit": {"alloc": "1GiB"}})"),
               R"(deepum: config /tmp/n.json: unknown key "limit" (did you mean "limits"?))");
  check_failed(
      load_nested(R"({"limits": {"zzzzzzzzzz": 1}})"),
      "deepum: config /tmp/n.json: unknown key \"limits.zzzzzzzzzz\" (the keys are enabled, limits.alloc, "
      "limits.gpu.resident)");
  check_failed(
      load_nested(R"({"limits": 5})"),
      R"(deepum: config /tmp/n.json: key "limits": expected an object with the keys alloc, gpu, got 5)");
  check_failed(
      load_nested(R"({"limits": {"gpu": "2GiB"}})"),
      R"(deepum: config /tmp/n.json: key "limits.gpu": expected an object with the keys resident, got "2GiB")");
  check_failed(
      load_nested(R"({"limits": {"alloc": {"x": 1}}})"),
      R"(deepum: config /tmp/n.json: key "limits.alloc": expected a size such as "8GiB", "512MiB", "1073741824B" or "50%", got {"x":1})");
}

TEST_CASE("the Markdown table shows nested keys dotted") {
  const std::string table = cfg::keys_markdown_table(kNestedKeys);
  CHECK(table.find(
            "| `limits.gpu.resident` | size | `100%` | `DEEPUM_LIMITS_GPU_RESIDENT` | Residency limit. |") !=
        std::string::npos);
}

TEST_CASE("field<> reaches a member through a path of members") {
  Outer outer;
  cfg::detail::member_of<&Outer::inner, &Inner::value>(outer) = 7;
  CHECK(outer.inner.value == 7);
  Config config;
  const cfg::Field summary = cfg::field<&Config::summary>();
  REQUIRE(std::holds_alternative<cfg::FieldOf<bool>>(summary));  // the member's type is the key's type
  std::get<cfg::FieldOf<bool>>(summary)(config) = false;
  CHECK_FALSE(config.summary);
  CHECK(std::holds_alternative<cfg::FieldOf<SizeSpec>>(cfg::field<&Config::alloc_limit>()));
  CHECK(std::holds_alternative<cfg::FieldOf<std::uint32_t>>(cfg::field<&Config::trace_flush_ms>()));
  CHECK(std::holds_alternative<cfg::FieldOf<TracingLevel>>(cfg::field<&Config::tracing>()));
}
