// The rules between keys. Each rule names the keys it makes idle and why; a key is named by the
// first rule that applies, so one cause gives one line.
#include "deepum/config/validate.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/config/keys.hpp"

namespace deepum::config {
namespace {

using Keys = std::span<const std::string_view>;

constexpr std::array<std::string_view, 1> kMode{"mode"};
constexpr std::array<std::string_view, 1> kResidentLimit{"resident_limit"};
constexpr std::array<std::string_view, 1> kEvictionHeadroom{"eviction_headroom"};
constexpr std::array<std::string_view, 1> kSwapStoreLimit{"swap_store_limit"};
constexpr std::array<std::string_view, 1> kLaunchOrdered{"stream_ordered_eviction"};
constexpr std::array<std::string_view, 1> kEvictionThread{"stream_ordered_eviction_thread"};
// The deprecated keys of the moves besides evictions.
constexpr std::array<std::string_view, 4> kMoveKeys{"stream_ordered_prefetch", "stream_ordered_discard",
                                                    "stream_ordered_place_fresh", "stream_ordered_swap"};
constexpr std::array<std::string_view, 2> kEvictionsAhead{"evictions_ahead",
                                                          "stream_ordered_evictions_ahead"};
// What only CUPTI reads.
constexpr std::array<std::string_view, 3> kTracerKeys{"cupti_library", "trace_flush_ms",
                                                      "trace_per_thread_buffers"};

bool is_automatic(const SizeSpec& size) { return size == SizeSpec::of_bytes(0); }

// "79.2 GiB".
std::string gib(std::uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

// Collects the lines, each naming the keys set that a rule makes idle and not named yet.
class Notes {
 public:
  explicit Notes(const ConfigLoad& load) : load_(load) {}

  // The keys of `groups` (in the keys table's order) that were set and not named yet, in one line
  // with `reason`.
  void add(std::initializer_list<Keys> groups, std::string_view reason) {
    std::vector<std::string_view> idle;
    for (const KeySpec& key : config_keys()) {
      const bool in_group = std::any_of(groups.begin(), groups.end(), [&key](auto group) {
        return std::find(group.begin(), group.end(), key.name) != group.end();
      });
      if (in_group && load_.set_keys.contains(key.name) && named_.insert(key.name).second) {
        idle.push_back(key.name);
      }
    }
    if (idle.empty()) return;
    std::string line = "deepum: ";
    for (std::size_t i = 0; i < idle.size(); ++i) line.append(i == 0 ? "" : ", ").append(idle[i]);
    line += idle.size() == 1 ? " has no effect: " : " have no effect: ";
    lines_.push_back(line.append(reason));
  }

  void add_line(std::string line) { lines_.push_back(std::move(line)); }
  void clear_lines() { lines_.clear(); }
  std::vector<std::string> take() { return std::move(lines_); }

 private:
  const ConfigLoad& load_;
  std::set<std::string_view> named_;
  std::vector<std::string> lines_;
};

// Every key that only a held resident limit reads. `mode` is one unless it is driver, the cause;
// then resident_limit is one.
void add_no_limit(Notes& notes, const Config& config, std::string_view reason) {
  const Keys mode_or_limit = config.mode == Mode::driver ? Keys(kResidentLimit) : Keys(kMode);
  notes.add({mode_or_limit, kLaunchOrdered, kMoveKeys, kEvictionThread, kEvictionsAhead, kSwapStoreLimit,
             kEvictionHeadroom},
            reason);
}

// The idle keys and caps where deepum holds no resident limit, or where it holds one.
void add_limit_rules(Notes& notes, const ConfigLoad& load, bool held, std::string_view no_limit_reason) {
  const Config& config = load.config;
  if (!held) {
    add_no_limit(notes, config, no_limit_reason);
    return;
  }
  if (config.tracing == TracingLevel::off) return;  // the rule of tracing says what is idle
  if (load.set_keys.contains("trace_flush_ms") && config.trace_flush_ms > kHeldTraceFlushMs) {
    notes.add_line("deepum: trace_flush_ms " + std::to_string(config.trace_flush_ms) + " is held to " +
                   std::to_string(kHeldTraceFlushMs) + " while deepum holds a resident limit");
  }
  if (load.set_keys.contains("worker_interval_us") && config.worker_interval_us > kHeldWorkerIntervalUs) {
    notes.add_line("deepum: worker_interval_us " + std::to_string(config.worker_interval_us) +
                   " is held to " + std::to_string(kHeldWorkerIntervalUs) +
                   " while deepum holds a resident limit");
  }
}

// Why the configuration alone says deepum holds no resident limit.
std::string static_no_limit_reason(const Config& config) {
  if (config.mode == Mode::driver) return "mode driver holds no resident limit";
  if (!is_automatic(config.resident_limit)) {
    return "resident_limit " + config.resident_limit.to_string() +
           " is not below the GPU's memory, so deepum holds no limit";
  }
  return "resident_limit is automatic and alloc_limit " + config.alloc_limit.to_string() +
         " fits in the GPU, so deepum holds no limit";
}

// The rules that need no device: tracing and the moves.
void add_engine_rules(Notes& notes, const Config& config) {
  const bool driver = config.mode == Mode::driver;
  if (config.tracing == TracingLevel::off) {
    notes.add({kResidentLimit, kMode, kLaunchOrdered, kMoveKeys, kEvictionThread, kEvictionsAhead,
               kSwapStoreLimit, kEvictionHeadroom},
              "with tracing off deepum sees no launch, and nothing holds a resident limit");
    notes.add({kTracerKeys}, "tracing is off");
    return;
  }
  if (driver) return;  // nothing moves: the rule of the limit named what is idle
  if (!config.deprecated.stream_ordered_eviction) {
    notes.add({kMode, kMoveKeys, kSwapStoreLimit},
              "stream_ordered_eviction false runs as mode evict, evictions alone");
  }
  if (!config.moves.swap) {
    notes.add({kSwapStoreLimit}, "nothing is swapped (mode " + std::string(mode_name(config.mode)) + ")");
  }
}

}  // namespace

std::string describe_moves(const Config& config) {
  if (config.mode == Mode::driver) return "none: the driver pages memory on faults (mode driver)";
  if (config.tracing == TracingLevel::off) return "none: deepum sees no launch (tracing off)";
  const Moves& moves = config.moves;
  std::string text =
      moves.eviction_thread ? "evictions (from deepum's thread)" : "evictions (from the program's thread)";
  if (moves.prefetch) text += ", prefetches";
  if (moves.discard) text += ", discards";
  if (moves.place_fresh) text += ", placement of fresh blocks";
  if (moves.swap) text += ", swaps";
  return text;
}

std::vector<std::string> config_notes(const ConfigLoad& load) {
  Notes notes(load);
  const Config& config = load.config;
  if (const std::optional<bool> held = holds_resident_limit(config)) {
    add_limit_rules(notes, load, *held, static_no_limit_reason(config));
  }
  add_engine_rules(notes, config);
  return notes.take();
}

std::vector<std::string> limit_notes(const ConfigLoad& load, const ResolvedLimits& limits, int device) {
  if (holds_resident_limit(load.config)) return {};  // config_notes said it
  Notes notes(load);
  add_engine_rules(notes, load.config);  // config_notes said these: only the keys they named count
  notes.clear_lines();
  std::string reason = "deepum holds no resident limit on device " + std::to_string(device) + ": ";
  if (limits.resident_automatic) {
    reason += "alloc_limit " + gib(limits.alloc_bytes) + " fits in its " + gib(limits.resident_bytes);
  } else {
    reason += "resident_limit " + gib(limits.resident_bytes) + " is not below its memory";
  }
  add_limit_rules(notes, load, limits.held, reason);
  return notes.take();
}

}  // namespace deepum::config
