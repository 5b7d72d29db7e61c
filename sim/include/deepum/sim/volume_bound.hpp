// The least a workload must move between host and GPU memory at a given capacity: Belady's MIN on
// its operations' blocks, in order, with what it knows a program's memory allows for free. A block
// that dies before its next use (its range freed, or every allocator buffer in it returned) leaves
// for nothing and comes back fresh for nothing, as deepum's engine drops and places such blocks;
// a first touch is fresh too. It bounds the volume (bytes), not the schedule: no victim choice
// moves less, however the moves are timed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "deepum/sim/engine.hpp"
#include "deepum/sim/workload.hpp"

namespace deepum::sim {

// Per block, the operations that name it and those before which it dies (its range freed, or its
// last allocator buffer returned), each ascending.
struct BlockTimes {
  static constexpr std::uint32_t kNever = ~std::uint32_t{0};
  std::vector<std::vector<std::uint32_t>> uses, deaths;
  // The first operation after `after` that names `block`, or before which it dies (its room comes
  // back then without a move); kNever: neither.
  std::uint32_t next_use(BlockIndex block, std::uint32_t after) const;
};
BlockTimes block_times(const Workload& workload);

struct VolumeBound {
  std::uint64_t to_gpu_bytes = 0, to_host_bytes = 0;
};

// Over the operations from `window_start` on (the ones before it are replayed, not counted), at
// `capacity_blocks` 2 MB blocks (at least the most any operation names).
VolumeBound belady_volume(const Workload& workload, std::uint64_t capacity_blocks,
                          std::uint32_t window_start = 0);

// What a replay's victims cost: each block it wrote to the host (dropped ones are free), by when the
// trace names it next, counted in operations from the one it left before. One named again soon
// comes straight back; one that dies first (its range freed, or its allocator buffers returned)
// was written for nothing, where the bound above drops it.
struct VictimCost {
  static constexpr std::uint32_t kSoon = 64, kLater = 1024;  // operations
  std::uint64_t written_bytes = 0;
  std::uint64_t soon_bytes = 0;    // named again within kSoon operations
  std::uint64_t within_bytes = 0;  // within kLater (from kSoon on)
  std::uint64_t later_bytes = 0;
  std::uint64_t never_bytes = 0;       // not named again in the trace (nor dead)
  std::uint64_t died_first_bytes = 0;  // dead before named again
};

// Over the evictions (SimResult::evictions, RunOptions::record_evictions) from `window_start` on.
VictimCost victim_cost(const Workload& workload, std::span<const EvictionRecord> evictions,
                       std::uint32_t window_start = 0);

}  // namespace deepum::sim
