// NVTX ranges around deepum's own moves, on the thread that issues them, in a domain named
// "deepum": Nsight Systems shows them (`nsys profile -t nvtx,osrt`; with CUDA tracing on, Nsight
// holds CUPTI and deepum does not trace, so it moves nothing). NVTX v3 is header-only: nothing is
// linked, and with no tool attached a range costs a load and a branch. Without the toolkit's
// nvtx3 headers the ranges compile to nothing.
//
// Lock discipline: NVTX's first call loads the tool's library (dlopen), which must never happen
// inside a CUPTI callback, so NVTX is initialized once, at start, outside any callback, and a range
// opened before that is skipped (never waits for the initialization).
#pragma once

#include <cstdint>

namespace deepum::cuda {

enum class MoveRangeKind : std::uint8_t {
  eviction,         // evictions and swap-outs enqueued
  discard,          // dead memory dropped
  prefetch,         // prefetches before launches
  placement,        // fresh blocks placed, swapped blocks placed and copied back
  host_copy_back,   // swapped blocks copied back by the host
  eviction_thread,  // an eviction issued by deepum's eviction thread
  count
};

// NVTX initialized and deepum's domain and names registered; once, outside any CUPTI callback.
// True when NVTX is built in.
bool start_move_ranges() noexcept;

// A range on this thread for the scope's life, when NVTX is started.
class MoveRange {
 public:
  explicit MoveRange(MoveRangeKind kind) noexcept;
  ~MoveRange();
  MoveRange(const MoveRange&) = delete;
  MoveRange& operator=(const MoveRange&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace deepum::cuda
