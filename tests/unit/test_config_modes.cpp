// One setting for how memory moves: `mode` and the moves it sets, the deprecated keys it replaces
// and their notices, the notes on settings that have no effect, and the automatic resident limit.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/limits.hpp"
#include "deepum/config/validate.hpp"

namespace {

namespace cfg = deepum::config;
using cfg::Config;
using cfg::ConfigLoad;
using cfg::DeviceMemory;
using cfg::Mode;
using cfg::Moves;
using cfg::SizeSpec;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

ConfigLoad load_env(std::map<std::string, std::string> vars) {
  return cfg::load_config([vars = std::move(vars)](const char* name) -> const char* {
    const auto found = vars.find(name);
    return found == vars.end() ? nullptr : found->second.c_str();
  });
}

ConfigLoad load_json(std::string_view json) {
  return cfg::load_config_text(json, "/etc/deepum.json", [](const char*) -> const char* { return nullptr; });
}

// The moves a load settled on, written as the deprecated keys would set them.
Moves moves(bool prefetch, bool discard, bool place_fresh, bool swap) {
  return Moves{.prefetch = prefetch, .discard = discard, .place_fresh = place_fresh, .swap = swap};
}

// A configuration with a resident limit below the device's memory, so the engine's rules apply.
constexpr std::string_view kHalf = "50%";

}  // namespace

TEST_CASE("each mode sets its moves; fast is the default") {
  CHECK(cfg::moves_of(Mode::fast) == moves(true, true, true, true));
  // safe leaves out the two moves that assume every use of memory is named by a launch.
  CHECK(cfg::moves_of(Mode::safe) == moves(true, true, false, false));
  CHECK(cfg::moves_of(Mode::evict) == moves(false, false, false, false));
  for (Mode mode : {Mode::fast, Mode::safe, Mode::evict, Mode::driver}) {
    CAPTURE(cfg::mode_name(mode));
    CHECK(cfg::moves_of(mode).eviction_thread);
    const ConfigLoad load = load_env({{"DEEPUM_MODE", std::string(cfg::mode_name(mode))}});
    REQUIRE_MESSAGE(load.ok(), load.error);
    CHECK(load.config.mode == mode);
    CHECK(load.config.moves == cfg::moves_of(mode));
  }
  CHECK(Config{}.mode == Mode::fast);
  CHECK(Config{}.moves == cfg::moves_of(Mode::fast));
  const ConfigLoad from_file = load_json(R"({"mode": "Safe"})");
  REQUIRE_MESSAGE(from_file.ok(), from_file.error);
  CHECK(from_file.config.moves == cfg::moves_of(Mode::safe));
  CHECK(
      load_json(R"({"mode": true})").error ==
      R"(deepum: config /etc/deepum.json: key "mode": expected one of fast, safe, evict, driver, got true)");
}

TEST_CASE("a deprecated move key still sets its move, and says once what replaces it") {
  const ConfigLoad load = load_env(
      {{"DEEPUM_STREAM_ORDERED_SWAP", "false"}, {"DEEPUM_MODE", "fast"}, {"DEEPUM_ALLOC_LIMIT", "200%"}});
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.moves == moves(true, true, true, false));  // fast, less the swaps
  REQUIRE(load.warnings.size() == 1);
  CHECK(
      load.warnings[0] ==
      R"(deepum: environment DEEPUM_STREAM_ORDERED_SWAP: deprecated, use mode ("fast" swaps, "safe" does not))");

  const ConfigLoad from_file =
      load_json(R"({"stream_ordered_place_fresh": true, "mode": "safe", "resident_limit": "50%"})");
  REQUIRE_MESSAGE(from_file.ok(), from_file.error);
  CHECK(from_file.config.moves == moves(true, true, true, false));  // safe, and placement
  REQUIRE(from_file.warnings.size() == 1);
  CHECK(
      from_file.warnings[0] ==
      R"(deepum: config /etc/deepum.json: key "stream_ordered_place_fresh": deprecated, use mode ("fast" places fresh blocks, "safe" does not))");
}

TEST_CASE("a configuration written before mode existed runs as it did") {
  // The six switches of the README's old settings file, and no mode: mode fast's moves.
  const ConfigLoad fastest = load_env({{"DEEPUM_STREAM_ORDERED_EVICTION", "true"},
                                       {"DEEPUM_STREAM_ORDERED_PREFETCH", "true"},
                                       {"DEEPUM_STREAM_ORDERED_DISCARD", "true"},
                                       {"DEEPUM_STREAM_ORDERED_PLACE_FRESH", "true"},
                                       {"DEEPUM_STREAM_ORDERED_EVICTION_THREAD", "true"},
                                       {"DEEPUM_STREAM_ORDERED_SWAP", "true"},
                                       {"DEEPUM_RESIDENT_LIMIT", "90%"}});
  REQUIRE_MESSAGE(fastest.ok(), fastest.error);
  CHECK(fastest.config.moves == cfg::moves_of(Mode::fast));
  CHECK(fastest.warnings.size() == 6);  // one notice each

  // One switch alone: the other moves as they were before mode (evictions only).
  const ConfigLoad prefetch = load_env({{"DEEPUM_STREAM_ORDERED_PREFETCH", "true"}});
  CHECK(prefetch.config.moves == moves(true, false, false, false));
  // Evictions from CUPTI's records alone are gone: evictions alone, before launches, as mode evict,
  // whatever mode and the other moves' switches say.
  const ConfigLoad records = load_env({{"DEEPUM_STREAM_ORDERED_EVICTION", "false"},
                                       {"DEEPUM_MODE", "fast"},
                                       {"DEEPUM_STREAM_ORDERED_SWAP", "true"},
                                       {"DEEPUM_STREAM_ORDERED_EVICTION_THREAD", "false"}});
  CHECK(records.config.moves == Moves{.prefetch = false,
                                      .discard = false,
                                      .place_fresh = false,
                                      .swap = false,
                                      .eviction_thread = false});
  CHECK(records.warnings[0] ==
        R"(deepum: environment DEEPUM_STREAM_ORDERED_EVICTION: deprecated, use mode ("evict" evicts alone, )"
        R"(before launches; false, which evicted from CUPTI's records, now runs as "evict"))");
}

TEST_CASE("the correlation prefetcher's keys are no longer read: one notice each, nothing else") {
  // prefetch.enabled, as the old scripts set it, leaves mode's moves alone.
  const ConfigLoad enabled =
      load_env({{"DEEPUM_PREFETCH_ENABLED", "true"}, {"DEEPUM_RESIDENT_LIMIT", "1GiB"}});
  REQUIRE_MESSAGE(enabled.ok(), enabled.error);
  CHECK(enabled.config.moves == cfg::moves_of(Mode::fast));
  CHECK(
      enabled.warnings ==
      std::vector<std::string>{"deepum: environment DEEPUM_PREFETCH_ENABLED: no longer read: the correlation "
                               "prefetcher's moves are the engine's (mode)"});
  const ConfigLoad discard =
      load_json(R"({"prefetch": {"discard": true}, "mode": "evict", "resident_limit": "50%"})");
  REQUIRE_MESSAGE(discard.ok(), discard.error);
  CHECK(discard.config.moves == cfg::moves_of(Mode::evict));
  CHECK(discard.warnings ==
        std::vector<std::string>{
            "deepum: config /etc/deepum.json: key \"prefetch.discard\": no longer read: the "
            "engine discards dead victims itself (mode fast and safe)"});
  // Their values are checked as before.
  CHECK(load_env({{"DEEPUM_PREFETCH_ENABLED", "maybe"}}).error ==
        "deepum: environment DEEPUM_PREFETCH_ENABLED=\"maybe\": expected one of 1, 0, true, false, yes, no, "
        "on, "
        "off");
}

TEST_CASE("stream_ordered_evictions_ahead is read as evictions_ahead") {
  const ConfigLoad load = load_json(R"({"stream_ordered_evictions_ahead": 3})");
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.config.evictions_ahead == 3);
  CHECK(load.config.moves == cfg::moves_of(Mode::fast));  // not a move: the moves stay mode's
  REQUIRE_FALSE(load.warnings.empty());
  CHECK(
      load.warnings[0] ==
      R"(deepum: config /etc/deepum.json: key "stream_ordered_evictions_ahead": deprecated, use evictions_ahead)");
}

TEST_CASE("the defaults, and a plain resident limit, need no note") {
  CHECK(load_env({}).warnings.empty());
  CHECK(load_env({{"DEEPUM_RESIDENT_LIMIT", "40GiB"}}).warnings.empty());
  CHECK(load_env({{"DEEPUM_ALLOC_LIMIT", "300%"}, {"DEEPUM_MODE", "safe"}}).warnings.empty());
  CHECK(load_env({{"DEEPUM_RESIDENT_LIMIT", std::string(kHalf)}, {"DEEPUM_MODE", "evict"}}).warnings.empty());
}

TEST_CASE("a setting that needs a resident limit says so where the configuration holds none") {
  // The automatic limit holds nothing while the program may allocate no more than the GPU has.
  const ConfigLoad fits = load_env({{"DEEPUM_MODE", "safe"}, {"DEEPUM_EVICTION_HEADROOM", "2GiB"}});
  REQUIRE(fits.warnings.size() == 1);
  CHECK(
      fits.warnings[0] ==
      "deepum: mode, eviction_headroom have no effect: resident_limit is automatic and alloc_limit 100% fits "
      "in the GPU, so deepum holds no limit");

  const ConfigLoad whole = load_env({{"DEEPUM_RESIDENT_LIMIT", "100%"}, {"DEEPUM_SWAP_STORE_LIMIT", "8GiB"}});
  REQUIRE(whole.warnings.size() == 1);
  CHECK(whole.warnings[0] ==
        "deepum: swap_store_limit has no effect: resident_limit 100% is not below the GPU's memory, so "
        "deepum holds no limit");

  // Mode driver is the cause, so the resident limit is what goes unused.
  const ConfigLoad driver =
      load_env({{"DEEPUM_MODE", "driver"}, {"DEEPUM_RESIDENT_LIMIT", std::string(kHalf)}});
  REQUIRE(driver.warnings.size() == 1);
  CHECK(driver.warnings[0] == "deepum: resident_limit has no effect: mode driver holds no resident limit");
}

TEST_CASE("each rule between keys names what it leaves idle, once") {
  const auto notes = [](std::map<std::string, std::string> vars) {
    vars["DEEPUM_RESIDENT_LIMIT"] = std::string(kHalf);
    return load_env(std::move(vars)).warnings;
  };
  CHECK(notes({{"DEEPUM_MODE", "safe"}, {"DEEPUM_SWAP_STORE_LIMIT", "8GiB"}}) ==
        std::vector<std::string>{"deepum: swap_store_limit has no effect: nothing is swapped (mode safe)"});
  // With tracing off deepum sees no launch: every key of the limit, and CUPTI's, are idle.
  CHECK(
      notes({{"DEEPUM_TRACING", "off"}, {"DEEPUM_MODE", "fast"}, {"DEEPUM_TRACE_FLUSH_MS", "10"}}) ==
      std::vector<std::string>{"deepum: resident_limit, mode have no effect: with tracing off deepum sees no "
                               "launch, and nothing holds a resident limit",
                               "deepum: trace_flush_ms has no effect: tracing is off"});
  // The prefetcher's keys get their notice alone: no rule names them.
  CHECK(notes({{"DEEPUM_PREFETCH_ENABLED", "true"}, {"DEEPUM_TRACING", "launches"}}).size() == 1);
  const std::vector<std::string> records = notes({{"DEEPUM_STREAM_ORDERED_EVICTION", "false"},
                                                  {"DEEPUM_MODE", "fast"},
                                                  {"DEEPUM_STREAM_ORDERED_PREFETCH", "true"},
                                                  {"DEEPUM_EVICTIONS_AHEAD", "2"}});
  REQUIRE(records.size() == 3);  // the two notices, then the note; evictions_ahead still counts
  CHECK(records[2] ==
        "deepum: mode, stream_ordered_prefetch have no effect: stream_ordered_eviction false runs as mode "
        "evict, evictions alone");
  // Held to the limit's pace rather than idle.
  CHECK(
      notes({{"DEEPUM_TRACE_FLUSH_MS", "5"}, {"DEEPUM_WORKER_INTERVAL_US", "200"}}) ==
      std::vector<std::string>{"deepum: trace_flush_ms 5 is held to 2 while deepum holds a resident limit"});
}

TEST_CASE("where the device decides whether a limit is held, the note waits for it") {
  // Sizes in bytes: nothing to say before the device is known.
  const ConfigLoad load = load_env({{"DEEPUM_ALLOC_LIMIT", "40GiB"}, {"DEEPUM_MODE", "safe"}});
  REQUIRE(load.warnings.empty());
  const DeviceMemory big{70 * kGiB, 80 * kGiB};
  const cfg::ResolvedLimits on_big = cfg::resolve_limits(load.config, big);
  CHECK_FALSE(on_big.held);
  CHECK(cfg::limit_notes(load, on_big, 0) ==
        std::vector<std::string>{"deepum: mode has no effect: deepum holds no resident limit on device 0: "
                                 "alloc_limit 40.0 GiB fits in its 80.0 GiB"});
  const DeviceMemory small{15 * kGiB, 16 * kGiB};
  const cfg::ResolvedLimits on_small = cfg::resolve_limits(load.config, small);
  CHECK(on_small.held);
  CHECK(cfg::limit_notes(load, on_small, 1).empty());

  const ConfigLoad explicit_bytes =
      load_env({{"DEEPUM_RESIDENT_LIMIT", "96GiB"}, {"DEEPUM_EVICTION_HEADROOM", "2GiB"}});
  REQUIRE(explicit_bytes.warnings.empty());
  CHECK(cfg::limit_notes(explicit_bytes, cfg::resolve_limits(explicit_bytes.config, big), 0) ==
        std::vector<std::string>{"deepum: eviction_headroom has no effect: deepum holds no resident limit on "
                                 "device 0: resident_limit 96.0 GiB is not below its memory"});
  // Said at load already: not again on the device.
  const ConfigLoad said = load_env({{"DEEPUM_MODE", "safe"}});
  CHECK(cfg::limit_notes(said, cfg::resolve_limits(said.config, big), 0).empty());
}

TEST_CASE("the automatic resident limit holds the device's free memory less a margin, past the GPU only") {
  Config config;
  config.alloc_limit = SizeSpec::of_percent(300.0);
  // An 80 GiB card with 10 GiB taken by another process: a sixteenth (5 GiB) kept free.
  const cfg::ResolvedLimits limits = cfg::resolve_limits(config, {70 * kGiB, 80 * kGiB});
  CHECK(limits.alloc_bytes == 240 * kGiB);
  CHECK(limits.resident_bytes == 65 * kGiB);
  CHECK(limits.resident_automatic);
  CHECK(limits.held);
  // A small card keeps at least 1 GiB; a nearly full one at most half of what is free.
  CHECK(cfg::capacity_margin({8 * kGiB, 8 * kGiB}) == kGiB);
  CHECK(cfg::resolve_limits(config, {8 * kGiB, 8 * kGiB}).resident_bytes == 7 * kGiB);
  CHECK(cfg::capacity_margin({kGiB, 80 * kGiB}) == kGiB / 2);
  CHECK(cfg::resolve_limits(config, {kGiB, 80 * kGiB}).resident_bytes == kGiB / 2);
  // A free figure past the total (no such device) counts as the total.
  CHECK(cfg::resolve_limits(config, {90 * kGiB, 80 * kGiB}).resident_bytes == 75 * kGiB);

  // Allocating no more than the card: nothing to hold, whatever is free.
  config.alloc_limit = SizeSpec::of_percent(100.0);
  const cfg::ResolvedLimits fits = cfg::resolve_limits(config, {30 * kGiB, 80 * kGiB});
  CHECK(fits.resident_bytes == 80 * kGiB);
  CHECK(fits.resident_automatic);
  CHECK_FALSE(fits.held);
  // No free memory reported: nothing to hold either.
  config.alloc_limit = SizeSpec::of_bytes(200 * kGiB);
  CHECK_FALSE(cfg::resolve_limits(config, {0, 80 * kGiB}).held);
}

TEST_CASE("a resident limit that is set is kept; mode driver holds none") {
  Config config;
  config.alloc_limit = SizeSpec::of_percent(300.0);
  config.resident_limit = SizeSpec::of_bytes(40 * kGiB);
  const cfg::ResolvedLimits set = cfg::resolve_limits(config, {70 * kGiB, 80 * kGiB});
  CHECK(set.resident_bytes == 40 * kGiB);
  CHECK_FALSE(set.resident_automatic);
  CHECK(set.held);
  config.resident_limit = SizeSpec::of_percent(100.0);
  CHECK_FALSE(cfg::resolve_limits(config, {70 * kGiB, 80 * kGiB}).held);
  config.resident_limit = SizeSpec::of_bytes(40 * kGiB);
  config.mode = Mode::driver;
  const cfg::ResolvedLimits driver = cfg::resolve_limits(config, {70 * kGiB, 80 * kGiB});
  CHECK(driver.resident_bytes == 40 * kGiB);
  CHECK_FALSE(driver.held);
}

TEST_CASE("whether a limit is held, from the configuration alone where it tells") {
  Config config;
  CHECK(cfg::holds_resident_limit(config) == false);  // automatic, allocating at most the GPU
  config.alloc_limit = SizeSpec::of_percent(150.0);
  CHECK(cfg::holds_resident_limit(config) == true);
  config.alloc_limit = SizeSpec::of_bytes(100 * kGiB);
  CHECK_FALSE(cfg::holds_resident_limit(config).has_value());  // depends on the device
  config.resident_limit = SizeSpec::of_percent(60.0);
  CHECK(cfg::holds_resident_limit(config) == true);
  config.resident_limit = SizeSpec::of_bytes(10 * kGiB);
  CHECK_FALSE(cfg::holds_resident_limit(config).has_value());
  config.mode = Mode::driver;
  CHECK(cfg::holds_resident_limit(config) == false);
}

TEST_CASE("the moves in words") {
  Config config;
  CHECK(cfg::describe_moves(config) ==
        "evictions (from deepum's thread), prefetches, discards, placement of fresh blocks, swaps");
  config.moves = cfg::moves_of(Mode::safe);
  CHECK(cfg::describe_moves(config) == "evictions (from deepum's thread), prefetches, discards");
  config.tracing = cfg::TracingLevel::off;
  CHECK(cfg::describe_moves(config) == "none: deepum sees no launch (tracing off)");
  config.mode = Mode::driver;
  CHECK(cfg::describe_moves(config) == "none: the driver pages memory on faults (mode driver)");
}

#ifdef DEEPUM_SOURCE_DIR
TEST_CASE("the README's settings file makes the moves its six old switches made, past the GPU") {
  const std::string path = std::string(DEEPUM_SOURCE_DIR) + "/examples/bigger-than-gpu.json";
  const ConfigLoad load = cfg::load_config([&path](const char* name) -> const char* {
    return std::string_view(name) == "DEEPUM_CONFIG" ? path.c_str() : nullptr;
  });
  REQUIRE_MESSAGE(load.ok(), load.error);
  CHECK(load.warnings.empty());
  const ConfigLoad old_switches = load_json(R"({"resident_limit": "90%", "alloc_limit": "300%",
      "stream_ordered_eviction": true, "stream_ordered_prefetch": true, "stream_ordered_discard": true,
      "stream_ordered_place_fresh": true, "stream_ordered_eviction_thread": true, "stream_ordered_swap": true})");
  REQUIRE_MESSAGE(old_switches.ok(), old_switches.error);
  CHECK(load.config.moves == old_switches.config.moves);
  CHECK(load.config.evictions_ahead == old_switches.config.evictions_ahead);
  const cfg::ResolvedLimits limits = cfg::resolve_limits(load.config, {70 * kGiB, 80 * kGiB});
  CHECK(limits.alloc_bytes == 240 * kGiB);
  CHECK(limits.held);
}
#endif
