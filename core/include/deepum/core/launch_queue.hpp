// LaunchQueue: carries KernelLaunch events from the program's launching threads to deepum's
// worker. The launch callback runs on every kernel launch, so pushing is wait-free and
// allocation-free: each thread owns a single-producer ring, registered once; the worker drains
// them all. A full ring drops the event and counts it rather than ever blocking the program.
//
// Threads come and go (data loaders, thread pools): a thread's ring is retired when the thread
// exits, and the worker frees it once it has drained what the thread pushed, so memory follows the
// threads alive, not every thread that ever launched.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::core {

// One producer thread's ring. Its slots are mapped, not allocated: the pages are committed as
// the ring first reaches them, so a thread that launched a few kernels holds a few pages.
class LaunchRing {
 public:
  // At 456 bytes a launch, 1.8 MiB at most. The worker drains every millisecond by default
  // (100 ms at most) and its steps stay under 8 ms at p99 (docs/benchmarks.md): a ring holds what
  // one thread launches meanwhile at tens of thousands of launches a second.
  static constexpr std::size_t kCapacity = 4096;  // a power of two

  LaunchRing();
  ~LaunchRing();
  LaunchRing(const LaunchRing&) = delete;
  LaunchRing& operator=(const LaunchRing&) = delete;

  // Producer. False (nothing written) when the ring is full or has no memory.
  bool push(const KernelLaunch& launch);
  // Producer: it will push no more (its thread is exiting). The launches already pushed stay.
  void retire() { retired_.store(true, std::memory_order_release); }

  // Consumer: hands every launch pushed so far to fn, in order. Returns how many, and sets
  // `finished` when the ring was retired before the drain and is now empty for good.
  template <typename Fn>
  std::size_t drain(Fn&& fn, bool& finished);

 private:
  KernelLaunch* slots_;  // nullptr: the mapping failed, every push is dropped
  std::atomic<bool> retired_{false};
  alignas(64) std::atomic<std::uint64_t> head_{0};  // next slot the producer writes
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // next slot the consumer reads
};

class LaunchQueue {
 public:
  static constexpr std::size_t kRingCapacity = LaunchRing::kCapacity;

  LaunchQueue();
  ~LaunchQueue();
  LaunchQueue(const LaunchQueue&) = delete;
  LaunchQueue& operator=(const LaunchQueue&) = delete;

  // Called on the launching thread. Never throws: a launch that cannot be queued is counted.
  void push(const KernelLaunch& launch) noexcept;

  // Called on the worker (one consumer at a time): hands every queued launch to fn, ring by ring,
  // in each thread's order, and frees the rings of threads that have exited once they are empty.
  template <typename Fn>
  std::size_t drain(Fn&& fn);

  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Rings held: one per thread alive that has launched, plus those of exited threads not drained yet.
  std::size_t producer_threads() const;

 private:
  std::shared_ptr<LaunchRing> register_ring();
  void push_after_thread_exit(const KernelLaunch& launch);
  void free_finished_rings();

  const std::uint64_t id_;          // tells a thread's ring of another queue from ours
  mutable std::mutex rings_mutex_;  // registration once per thread, removal once per exited thread
  std::vector<std::shared_ptr<LaunchRing>> rings_;
  std::atomic<std::uint64_t> dropped_{0};
  std::mutex late_mutex_;
  LaunchRing* late_ring_ = nullptr;  // under late_mutex_; see push_after_thread_exit
  // Consumer-only scratch, kept to avoid an allocation per drain.
  std::vector<LaunchRing*> draining_;
  std::vector<LaunchRing*> finished_;
};

template <typename Fn>
std::size_t LaunchRing::drain(Fn&& fn, bool& finished) {
  // Retired first: every push happened before the retirement, so the head read after it is final.
  const bool retired = retired_.load(std::memory_order_acquire);
  const std::uint64_t head = head_.load(std::memory_order_acquire);
  std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  const std::uint64_t first = tail;
  for (; tail != head; ++tail) fn(static_cast<const KernelLaunch&>(slots_[tail & (kCapacity - 1)]));
  tail_.store(tail, std::memory_order_release);
  finished = retired;
  return static_cast<std::size_t>(tail - first);
}

template <typename Fn>
std::size_t LaunchQueue::drain(Fn&& fn) {
  draining_.clear();
  {
    std::lock_guard lock(rings_mutex_);
    for (const auto& ring : rings_) draining_.push_back(ring.get());
  }
  finished_.clear();
  std::size_t drained = 0;
  for (LaunchRing* ring : draining_) {
    bool finished = false;
    drained += ring->drain(fn, finished);
    if (finished) finished_.push_back(ring);
  }
  if (!finished_.empty()) free_finished_rings();
  return drained;
}

}  // namespace deepum::core
