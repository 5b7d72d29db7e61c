// The least a workload must move between host and GPU memory at a given capacity: Belady's MIN on
// its operations' blocks, in order, with what it knows a program's memory allows for free. A block
// that dies before its next use (its range freed, or every allocator buffer in it returned) leaves
// for nothing and comes back fresh for nothing, as deepum's engine drops and places such blocks;
// a first touch is fresh too. It bounds the volume (bytes), not the schedule: no victim choice
// moves less, however the moves are timed.
#pragma once

#include <cstdint>

#include "deepum/sim/workload.hpp"

namespace deepum::sim {

struct VolumeBound {
  std::uint64_t to_gpu_bytes = 0, to_host_bytes = 0;
};

// Over the operations from `window_start` on (the ones before it are replayed, not counted), at
// `capacity_blocks` 2 MB blocks (at least the most any operation names).
VolumeBound belady_volume(const Workload& workload, std::uint64_t capacity_blocks,
                          std::uint32_t window_start = 0);

}  // namespace deepum::sim
