// LaunchFrontier: the launches the GPU has not finished, per stream and in launch order, with the
// memory each names. The host runs up to a whole training step ahead of the GPU, so this is the
// program's near future: what the GPU is about to fault in, and in which order it needs it.
//
// Why it exists: CUPTI's migration records reach deepum 0.1-2 s after the GPU faulted the memory
// in (H100, GPT-2 at 2x and 3x), so a limit held from them alone overshoots by what faults in
// meanwhile. How far the GPU has got is known much sooner (progress markers, within a millisecond;
// kernel records, tens of milliseconds), and the launches it reached name what it is faulting in.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <vector>

#include "deepum/core/events.hpp"
#include "deepum/core/residency_map.hpp"

namespace deepum::core {

class LaunchFrontier {
 public:
  // Memory the GPU has started on: a launch it reached names it. `done`: the launch has run (as
  // of the progress reported), else the GPU is on it or about to be.
  using ReachedFn = std::function<void(const AddressRange&, bool done)>;

  // reached_ahead: launches past a stream's known progress taken as reached too (the GPU is on
  // one of them; progress markers are recorded once every few launches). max_pending: launches
  // held at most; past it the oldest are taken as run (their progress was lost).
  explicit LaunchFrontier(std::size_t reached_ahead = 4, std::size_t max_pending = 1 << 16)
      : reached_ahead_(reached_ahead), max_pending_(max_pending) {}

  // A launch the host enqueued. Each pointer names [pointer, pointer + extent), rounded out to the
  // driver's 64 KB pages; a pointer of unknown extent names the rest of its 2 MB block.
  void on_launch(const KernelLaunch& launch);
  // Every launch on `stream` before `correlation_id` has run (a progress marker completed).
  void on_progress(std::uint64_t stream, std::uint64_t correlation_id, const ReachedFn& reached);
  // The launch `correlation_id` has run (its execution record), and so has every earlier one on
  // its stream. An id no pending launch has (a copy, a dropped launch) changes nothing.
  void on_executed(std::uint64_t correlation_id, const ReachedFn& reached);
  // Forget everything pending (kernel records paused: nothing would retire them).
  void clear();

  // For every block a pending launch names: the position of its first pending use on its stream
  // (0: the launch the GPU is on), the least over streams.
  std::unordered_map<BlockId, std::uint64_t> next_uses() const;
  std::size_t pending() const { return pending_count_; }
  std::uint64_t reached_bytes() const { return reached_bytes_; }  // named by reached launches, ever

 private:
  struct Pending {
    std::uint64_t correlation_id = 0;
    bool reached = false;
    std::vector<AddressRange> ranges;
  };
  using Stream = std::deque<Pending>;

  // Pops the launches of `stream` before `correlation_id` (reporting those not yet reached), then
  // marks the next reached_ahead_ as reached.
  void advance(Stream& stream, std::uint64_t correlation_id, bool including, const ReachedFn& reached);
  void reach(Pending& launch, bool done, const ReachedFn& reached);

  std::size_t reached_ahead_, max_pending_;
  std::unordered_map<std::uint64_t, Stream> streams_;  // by CUstream handle
  std::size_t pending_count_ = 0;
  std::uint64_t reached_bytes_ = 0;
};

}  // namespace deepum::core
