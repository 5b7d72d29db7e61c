// ProgramValueWaits: the program's stream memory waits (cuStreamWaitValue32/64, or a
// cuStreamBatchMemOp holding one) that may still be waiting on the GPU.
//
// Such a wait may be for a value that work enqueued later, in another stream, writes (a flag a
// later kernel sets). deepum orders a move after the work of the stream whose operation decided
// it, and later operations of any stream wait for moves: for their room, or behind them in
// deepum's own streams and eviction thread. A move decided after such a wait would make the work
// that ends the wait wait for it, and the program would hang. So the engine decides no move while
// one may be waiting (docs/configuration.md, "Modes").
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace deepum::cuda {

class ProgramValueWaits {
 public:
  // At the wait's driver API entry, on the program's thread, in the stream with id `stream_id`
  // (core/stream_id.hpp): it may wait from here on. A wait captured into a graph is left to the
  // graph's launch.
  void entered(std::uint64_t stream_id) noexcept;
  // At the exit of the same driver call, on the same thread (nothing where this thread entered
  // none): an event recorded after the wait in its stream tells when it has passed.
  void enqueued() noexcept;
  // Whether one may still be waiting: entered and not yet enqueued, or its event not yet fired.
  // Queries the events only while some wait; otherwise two atomic loads.
  bool any_waiting() noexcept;
  // The context is going away: its events are forgotten (not destroyed) and nothing waits.
  void forget() noexcept;

 private:
  struct Wait {
    std::uint64_t stream_id = 0;
    CUstream stream = nullptr;  // valid in the thread that recorded, for a per-thread stream
    CUevent passed = nullptr;   // recorded after the stream's latest wait
    bool recorded = false;      // false: the record failed, and the stream is queried instead
    bool waiting = false;
  };
  std::mutex mutex_;
  std::vector<Wait> waits_;  // one per stream: a later wait there passes after the earlier ones
  std::atomic<std::uint32_t> entered_{0}, waiting_{0};
  bool forgotten_ = false;  // under mutex_
};

}  // namespace deepum::cuda
