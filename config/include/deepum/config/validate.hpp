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

// The moves in words, for the log line at start and `deepum config`: "evictions (from deepum's
// thread), prefetches, discards, placement of fresh blocks, swaps".
std::string describe_moves(const Config& config);

// One line for each group of keys the file or the environment set that have no effect, with the
// reason ("deepum: swap_store_limit has no effect: nothing is swapped (mode safe)"). Rules that depend on the
// device's memory are left to limit_notes() where the configuration alone does not tell
// (holds_resident_limit).
std::vector<std::string> config_notes(const ConfigLoad& load);

// The rules config_notes() left to the device, once its limits are resolved: the keys that have
// no effect because deepum holds no resident limit on `device`, or none.
std::vector<std::string> limit_notes(const ConfigLoad& load, const ResolvedLimits& limits, int device);

}  // namespace deepum::config
