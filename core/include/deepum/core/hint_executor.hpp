// HintExecutor: the one seam through which deepum's decisions reach the driver. The CUDA
// implementation is cuda/DriverHintExecutor; tests and the simulator use their own.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "deepum/core/residency_map.hpp"

namespace deepum::core {

// One round of hints, carried out in this order: discard, evict, prefetch. Ranges lie inside
// managed allocations (the planner's 2 MB blocks clipped to them).
struct HintPlan {
  std::vector<AddressRange> discard;   // dead memory: dropped, never written back
  std::vector<AddressRange> evict;     // to the host, making room
  std::vector<AddressRange> prefetch;  // to the GPU, the nearest kernel's blocks first

  bool empty() const { return discard.empty() && evict.empty() && prefetch.empty(); }
  std::uint64_t evict_bytes() const { return total_bytes(evict); }
  std::uint64_t prefetch_bytes() const { return total_bytes(prefetch); }
};

class HintExecutor {
 public:
  virtual ~HintExecutor() = default;
  // Moves the ranges to host memory and returns once they are there; false if the driver refused.
  virtual bool evict_to_host(std::span<const AddressRange> ranges) = 0;
  // Starts the plan on deepum's own streams and returns at once: evictions (with discards) and
  // prefetches each run on their own, without waiting for each other (the plan puts prefetches
  // only into room already free). Each kind may be submitted only once the last of its kind is
  // done (its in-flight bytes are 0). False if a part could not be started.
  virtual bool submit(const HintPlan& plan) = 0;
  // Bytes of evictions submitted and not yet done: room the GPU does not have yet.
  virtual std::uint64_t evictions_in_flight_bytes() = 0;
  // Bytes of prefetches submitted and not yet done.
  virtual std::uint64_t prefetches_in_flight_bytes() = 0;
  // Device memory in use on the whole GPU now, as the driver reports it; nullopt if unknown.
  virtual std::optional<std::uint64_t> device_used_bytes() = 0;
};

}  // namespace deepum::core
