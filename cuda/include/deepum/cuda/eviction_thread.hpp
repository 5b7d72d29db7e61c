// EvictionThread: issues evictions that run alongside the program (no launch waits for them yet)
// from a thread of deepum's. The driver does a move to the host in the calling thread when the
// move's stream is idle, for the whole move (about 70 ms per GiB on an H100); on the program's
// thread that stops it from enqueuing work for the GPU meanwhile.
//
// Every wait for such an eviction stays a CUDA event wait, which the GPU's scheduler sees: whoever
// needs its room first waits on the host until this thread has issued it (recorded its event),
// then on the event. (A stream waiting for a value a later operation writes, cuStreamWaitValue32,
// would avoid that host wait, but CUDA may queue the writer behind the waiter and deadlock.)
//
// No deadlock: this thread takes no lock a program thread holds, and an eviction waits only for
// an event recorded before it was handed over.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deepum/core/residency_map.hpp"

namespace deepum::cuda {

class EvictionThread {
 public:
  EvictionThread() = default;
  ~EvictionThread() { stop(); }
  EvictionThread(const EvictionThread&) = delete;
  EvictionThread& operator=(const EvictionThread&) = delete;

  // In the current context: the thread's stream and the thread. Empty on success, else what
  // failed (nothing started).
  std::string start();
  // Hands one eviction over: after `ready` (recorded before this call) `ranges` move to the host
  // on the thread's stream, and `done` is recorded after them. Returns its number (1, 2, ... in
  // the order handed over).
  std::uint32_t hand_over(CUevent ready, CUevent done, std::vector<core::AddressRange> ranges);
  // Issued: `done` is recorded (or the driver refused the eviction; see take_failed).
  bool issued(std::uint32_t number) const { return issued_.load(std::memory_order_acquire) >= number; }
  // Returns once eviction `number` is issued.
  void wait_issued(std::uint32_t number);
  // Evictions the driver refused since the last call (their blocks stayed resident; their `done`
  // events were recorded on the thread's stream all the same).
  std::vector<std::vector<core::AddressRange>> take_failed();
  // Time this thread spent in the driver's move calls.
  std::uint64_t held_ns() const { return held_ns_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  // Issues what was handed over, then ends the thread.
  void stop();

 private:
  struct Handed {
    CUevent ready = nullptr, done = nullptr;
    std::vector<core::AddressRange> ranges;
    std::uint32_t number = 0;
  };
  void run(CUcontext context);
  bool issue(const Handed& eviction);  // false: the driver refused the moves

  CUstream stream_ = nullptr;
  std::thread thread_;
  std::mutex mutex_;  // what follows; never held across a driver call
  std::condition_variable wake_, issued_wake_;
  std::deque<Handed> handed_;
  std::vector<std::vector<core::AddressRange>> failed_;
  std::uint32_t next_number_ = 0;
  bool stopping_ = false;
  std::atomic<std::uint32_t> issued_{0};
  std::atomic<std::uint64_t> held_ns_{0}, failures_{0};
};

}  // namespace deepum::cuda
