// ProgressMarkers: how far the GPU has got through the program's launches, known within a
// millisecond. CUPTI hands over a kernel's record only once every record in its buffer is complete,
// and with the host a whole iteration ahead that took 65-130 ms (median) on an H100 under
// oversubscription: far too late to plan the next kernels from. So every few launches the launch
// callback records an event of ours into the launch's stream, and the worker polls the events:
// a completed event means every earlier launch on that stream has run.
//
// Never touches a stream being captured into a graph (the event would become a graph node).
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace deepum::cuda {

struct StreamProgress {
  std::uint64_t stream = 0;          // the CUstream handle, as the launch events carry it
  std::uint64_t correlation_id = 0;  // every launch on the stream before this one has run
};

class ProgressMarkers {
 public:
  // One marker per this many launches of a thread.
  static constexpr std::uint32_t kLaunchesPerMarker = 4;
  static constexpr std::size_t kEvents = 512;

  // Creates the event pool in the current context. Empty on success, else what failed.
  std::string create();

  // Program threads, inside the launch callback at API entry: maybe records a marker on the
  // stream. Never blocks beyond a short lock, never fails visibly.
  void before_launch(std::uint64_t stream, std::uint64_t correlation_id) noexcept;

  // Worker: the markers that completed since the last call, oldest first per stream.
  std::vector<StreamProgress> poll();

  std::uint64_t recorded() const { return recorded_.load(std::memory_order_relaxed); }
  std::uint64_t skipped_capturing() const { return skipped_capturing_.load(std::memory_order_relaxed); }

 private:
  struct Marker {
    CUevent event = nullptr;
    StreamProgress progress;
  };

  std::mutex mutex_;
  std::vector<CUevent> free_events_;  // under mutex_
  std::deque<Marker> pending_;        // under mutex_, in recording order
  bool ready_ = false;
  std::atomic<std::uint64_t> recorded_{0}, skipped_capturing_{0};
};

}  // namespace deepum::cuda
