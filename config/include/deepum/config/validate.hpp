// The rules between keys ("X needs Y"), in one place: what the library composes from a
// configuration, and one line for each setting that has no effect, which deepum logs at start and
// `deepum config` shows. Pure: no CUDA.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/limits.hpp"

namespace deepum::config {

// While deepum holds a resident limit, every millisecond records wait lets residency overshoot it:
// CUPTI flushes and the worker runs at least this often.
inline constexpr std::uint32_t kHeldTraceFlushMs = 2;
inline constexpr std::uint32_t kHeldWorkerIntervalUs = 250;

// What moves memory while deepum holds a resident limit.
struct Movers {
  // The correlation prefetcher's plans (the deprecated prefetch.enabled): it needs the faults and
  // kernel records only tracing full gives.
  bool prefetcher = false;
  // mode's moves, ordered before launches: they need the launch callbacks (any tracing but off),
  // and stand aside while the prefetcher evicts (prefetch.pre_evict).
  bool launch_ordered = false;
  // How the GPU reaches memory that is not resident: remote_access with the prefetcher, else off
  // (nothing else would move memory to the GPU).
  RemoteAccess remote_access = RemoteAccess::off;
};

Movers movers_of(const Config& config);

// The moves in words, for the log line at start and `deepum config`: "evictions (from deepum's
// thread), prefetches, discards, placement of fresh blocks, swaps".
std::string describe_moves(const Config& config);

// One line for each group of keys the file or the environment set that have no effect, with the
// reason ("deepum: remote_access has no effect: it needs the correlation prefetcher
// (prefetch.enabled, tracing full)"). Rules that depend on the device's memory are left to
// limit_notes() where the configuration alone does not tell (holds_resident_limit).
std::vector<std::string> config_notes(const ConfigLoad& load);

// The rules config_notes() left to the device, once its limits are resolved: the keys that have
// no effect because deepum holds no resident limit on `device`, or none.
std::vector<std::string> limit_notes(const ConfigLoad& load, const ResolvedLimits& limits, int device);

}  // namespace deepum::config
