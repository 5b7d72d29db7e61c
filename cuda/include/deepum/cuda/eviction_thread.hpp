// EvictionThread: issues evictions from a thread of deepum's, in a CUDA context of its own. The
// driver does a move to the host in the calling thread when the move's stream is idle, for the
// whole move (about 70 ms per GiB on an H100), and while it does, it holds up other threads' calls
// in the same context, the program's kernel launches included. In a context of its own the move
// holds up only this thread (bench/deferred_move_probe.cu: 200 launches beside a 1 GiB move took
// 94 ms from a thread in the program's context, 0.9 ms from one in a context of its own). A swap
// (copies into deepum's store, then a drop) goes here too: the drop holds its caller while any
// copy of managed memory runs (bench/swap_call_probe.cu: 4.5 ms beside a 256 MiB copy) or is
// queued beside it, and copies of device memory as well (bench/staged_swap_probe.cu: 5.7 ms
// instead of 0.9 beside a staging area's copy to the host), so the next swap's copies start only
// after the drop (begun beside it, they made the CUDA sweep 21-26% slower:
// bench/results/2026-11-29-h200-overlapped-swaps).
//
// Every wait for such an eviction stays a CUDA event wait, which the GPU's scheduler sees: whoever
// needs its room first waits on the host until this thread has issued it (recorded its event),
// then on the event. A stream waiting on the GPU for a value this thread writes after the moves
// (cuStreamWaitValue32) would spare the program's thread that wait (1.7 s of a GPT-2 run at 2x), but
// it deadlocked GPT-2, the CuPy loop and the sweep before their first step (bench/results/2026-11-28-h100).
// So did a version in which this thread wrote the number from the host once the eviction had ended,
// which no GPU queue can hold up (bench/results/2026-11-28-h200-waits). Why is not known: in
// isolation neither a drop nor a placement waits for work queued behind such a value wait
// (bench/placement_hold_probe.cu). CUDA documents work ordered by these waits alone, as the launch
// after such a wait is, as able to deadlock; a wait for a value a later kernel of another stream
// wrote hung without deepum (bench/results/2026-11-29-h200-value-waits, call 2).
//
// No deadlock: this thread takes no lock a program thread holds, and an eviction waits only for
// an event recorded before it was handed over.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deepum/core/residency_map.hpp"
#include "deepum/cuda/own_moves.hpp"

namespace deepum::cuda {

class EvictionThread {
 public:
  EvictionThread() = default;
  ~EvictionThread() { stop(); }
  EvictionThread(const EvictionThread&) = delete;
  EvictionThread& operator=(const EvictionThread&) = delete;

  // The thread's context (or, failing that, the current one), its stream, and the thread. Empty on
  // success, else what failed (nothing started).
  std::string start();
  // Whether the thread runs in a context of its own.
  bool has_own_context() const { return own_context_ != nullptr; }
  // One eviction: after `ready` (recorded before it is handed over, in the program's context) the
  // blocks in `copies` are copied into their store slots and `dropped` is dropped on the GPU (a
  // swap), then `to_host` moves to the host on the thread's stream, and `done` (of the program's
  // context) is recorded after them. `waited`: a launch waits for it (told back with a failure).
  struct Eviction {
    CUevent ready = nullptr, done = nullptr;
    std::vector<core::AddressRange> to_host;
    std::vector<BlockCopy> copies;
    std::vector<core::AddressRange> dropped;
    bool waited = false;
  };
  // Returns its number (1, 2, ... in the order handed over), or 0 once stop() has begun: the
  // caller issues it.
  std::uint32_t hand_over(Eviction eviction);
  // Issued: `done` is recorded (or the driver refused the eviction; see take_failed).
  bool issued(std::uint32_t number) const { return issued_.load(std::memory_order_acquire) >= number; }
  // Returns once eviction `number` is issued.
  void wait_issued(std::uint32_t number);
  // Time callers of wait_issued spent waiting for an eviction not yet issued (the program's
  // threads, which need its room; a swap is issued once its copies have ended).
  std::uint64_t waited_ns() const { return waited_ns_.load(std::memory_order_relaxed); }
  // Evictions to the host the driver refused since the last call (their blocks stayed resident;
  // their `done` events were recorded all the same). A swap is never refused: where the driver
  // refuses its copies or drop, the thread copies the blocks into the store itself.
  struct Failed {
    std::vector<core::AddressRange> ranges;
    bool waited = false;
    std::uint32_t number = 0;  // as hand_over returned it
  };
  std::vector<Failed> take_failed();
  // Time this thread spent issuing evictions: the driver's move calls, and a refused swap's copies
  // on the host.
  std::uint64_t held_ns() const { return held_ns_.load(std::memory_order_relaxed); }
  // Of it: the calls that copy swapped blocks into the store, and the drops after them (with the
  // host's waits for those copies and then the drop to end).
  std::uint64_t copy_calls_ns() const { return copy_calls_ns_.load(std::memory_order_relaxed); }
  std::uint64_t drops_ns() const { return drops_ns_.load(std::memory_order_relaxed); }
  // Of the drops: the host's waits for the copies to end, and the drop calls themselves (the
  // rest is the wait for the drop to end).
  std::uint64_t drop_copy_waits_ns() const { return drop_copy_waits_ns_.load(std::memory_order_relaxed); }
  std::uint64_t drop_calls_ns() const { return drop_calls_ns_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  // Issues what was handed over, then ends the thread; with `discard_pending` (the context is
  // being reset: the events it would wait on and record are going away), drops it instead.
  void stop(bool discard_pending = false);
  // Inside the driver's destruction of the context (a CUPTI callback): drops what was handed over
  // and lets the thread end, without waiting for it (it may be inside the driver itself).
  void abandon();

 private:
  struct Handed {
    Eviction eviction;
    std::uint32_t number = 0;
  };
  // Makes the thread's context current and tells `bound` whether it could; then issues what is
  // handed over until stop().
  void run(std::promise<bool>& bound);
  // Under mutex_: what was handed over is dropped (its context is going away) and counted issued.
  void drop_handed();
  std::string create_own_context();      // own_context_, stream_, moved_ and relay_; empty on success
  bool issue(const Eviction& eviction);  // false: the driver refused the moves to the host
  // The swap's part: copies into the store, then the drop; the host copies where the driver refuses.
  void swap_out(const Eviction& eviction, CUresult after_ready);
  // The second lane of the copies out (see SecondLane), in the thread's context: false, none.
  bool create_second_lane();
  // The lane, its stream waiting for `ready`; none where there is no lane or the wait is refused.
  SecondLane second_lane(CUevent ready);
  // stream_ waits for the lane's copies (or the host does, where the driver refuses the wait).
  void join_second_lane();

  CUcontext program_context_ = nullptr;  // the context current where start() ran
  CUdevice device_ = 0;
  CUcontext own_context_ = nullptr;  // null: the thread runs in the program's context
  CUstream stream_ = nullptr;        // the moves, in the thread's context
  // With a context of its own: its event after each eviction's moves, which relay_ (in the
  // program's context) waits for before recording the eviction's `done` (an event is recorded
  // only in a stream of its own context).
  CUevent moved_ = nullptr;
  CUstream relay_ = nullptr;
  Staging staging_;  // the swaps' copies pass through it (in the thread's context)
  // Every other piece of a swap's copies goes through the second lane.
  Staging second_staging_;
  CUstream second_stream_ = nullptr;
  CUevent second_done_ = nullptr;  // recorded after the lane's copies, waited for by stream_
  std::thread thread_;
  std::mutex mutex_;  // what follows; never held across a driver call
  std::condition_variable wake_, issued_wake_;
  std::deque<Handed> handed_;
  std::vector<Failed> failed_;
  std::uint32_t next_number_ = 0;
  bool stopping_ = false;
  std::atomic<std::uint32_t> issued_{0};
  std::atomic<std::uint64_t> held_ns_{0}, waited_ns_{0}, failures_{0};
  std::atomic<std::uint64_t> copy_calls_ns_{0}, drops_ns_{0}, drop_copy_waits_ns_{0}, drop_calls_ns_{0};
  std::atomic<bool> abandoned_{false};  // the context is going away: no memory of it is read
};

}  // namespace deepum::cuda
