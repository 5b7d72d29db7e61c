// StreamOrderedEvictor: holds the resident limit at each launch, on the program's thread, by
// evictions ordered in the launch's stream (see core::LaunchOrderedResidency for the model).
//
// An eviction runs on a stream of deepum's own, after an event recorded in the launch's stream
// (so after every earlier launch there, the users of the victims included), and the launch's
// stream waits for its end before the launch that needs the room: the GPU cannot fault in past
// the limit, however late CUPTI's records come. Streams being captured into a graph are left
// alone (an event would become a graph node). Victims used by other streams may be faulted back:
// correct, only slower.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "deepum/core/launch_ordered_residency.hpp"

namespace deepum::cuda {

class StreamOrderedEvictor {
 public:
  StreamOrderedEvictor(std::uint64_t limit_bytes, std::uint64_t batch_bytes)
      : model_(limit_bytes, batch_bytes) {}

  // Creates the stream and events in the current context. Empty on success, else what failed.
  std::string create();

  // Allocation hooks, any thread.
  void on_range_allocated(std::uint64_t address, std::uint64_t bytes) noexcept;
  void on_range_freed(std::uint64_t address) noexcept;
  // Program threads, inside the launch callback at API entry (before the launch is enqueued):
  // enqueues what must come before the launch. Returns the ranges it evicted (empty: none, or the
  // driver refused; the first refusal is logged).
  std::vector<core::AddressRange> before_launch(const core::KernelLaunch& launch) noexcept;
  // The same before a copy or memset (its driver API entry).
  std::vector<core::AddressRange> before_copy(const core::CopyLaunch& copy) noexcept;

  // Worker: the evictions that finished since the last call, oldest first, each with when it
  // finished on the clock of `now` (CUPTI loses many of the driver's records of them; the caller
  // accounts for them itself). The first call sets the clock's origin.
  std::vector<std::pair<core::AddressRange, std::uint64_t>> poll_finished(std::uint64_t now);

  core::LaunchOrderedStats stats();
  std::uint64_t skipped_capturing() const { return skipped_capturing_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  // Evictions not issued because kEvents were still ahead of the GPU.
  std::uint64_t skipped_busy() const { return skipped_busy_.load(std::memory_order_relaxed); }

 private:
  // Events for the ends of evictions: enough for every eviction the GPU has not reached yet (the
  // host runs up to a training step ahead; GPT-2 124M at 3x decided 262 evictions in 11 steps).
 public:
  static constexpr std::size_t kEvents = 256;

 private:
  struct InFlight {
    CUevent done = nullptr;  // recorded on our stream after the eviction
    std::vector<core::AddressRange> ranges;
  };

  // Decides with `decide(model, may_evict)` what must come before an operation enqueued in
  // `stream_id`, and enqueues it.
  template <typename Decide>
  std::vector<core::AddressRange> before_operation(std::uint64_t stream_id, Decide&& decide) noexcept;
  bool issue(CUstream stream, core::LaunchEviction& decision);
  // Moves finished evictions to finished_ and their events back to the pool; under mutex_.
  void reap();

  std::mutex mutex_;  // the model, the events, and the order of event records on our stream
  core::LaunchOrderedResidency model_;
  CUstream stream_ = nullptr;
  CUevent program_done_ = nullptr;  // recorded in the launch's stream, waited for by ours
  std::vector<CUevent> free_events_;
  std::deque<InFlight> in_flight_;  // in the order issued on our stream (which is their end order)
  std::vector<std::pair<core::AddressRange, std::uint64_t>> finished_;  // with their end times
  // An event on our stream whose time on the caller's clock is known: the ends of evictions are
  // timed from it on the GPU's clock (the worker sees them up to milliseconds later, while the
  // next launch is already faulting memory in).
  CUevent anchor_ = nullptr;
  CUstream anchor_stream_ = nullptr;  // idle: the anchor is not queued behind evictions
  std::uint64_t anchor_time_ = 0;     // 0: not set yet
  std::uint64_t last_poll_ = 0;
  std::atomic<std::uint64_t> skipped_capturing_{0}, failures_{0}, skipped_busy_{0};
};

}  // namespace deepum::cuda
