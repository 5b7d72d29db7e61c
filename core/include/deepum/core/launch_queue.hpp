// LaunchQueue: carries KernelLaunch events from the program's launching threads to deepum's
// worker. The launch callback runs on every kernel launch, so pushing is wait-free and
// allocation-free: each thread owns a single-producer ring, registered once; the worker drains
// them all. A full ring drops the event and counts it rather than ever blocking the program.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::core {

class LaunchQueue {
 public:
  static constexpr std::size_t kRingCapacity = 8192;  // a power of two

  LaunchQueue();

  // Called on the launching thread.
  void push(const KernelLaunch& launch);

  // Called on the worker: hands every queued launch to fn, ring by ring, in each thread's order.
  template <typename Fn>
  std::size_t drain(Fn&& fn);

  std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  std::size_t producer_threads() const;

 private:
  struct Ring {
    std::array<KernelLaunch, kRingCapacity> slots;
    alignas(64) std::atomic<std::uint64_t> head{0};  // next slot the producer writes
    alignas(64) std::atomic<std::uint64_t> tail{0};  // next slot the consumer reads
  };
  Ring& ring_for_this_thread();

  const std::uint64_t id_;          // tells a thread's cached ring of another queue from ours
  mutable std::mutex rings_mutex_;  // registration only, once per thread
  std::vector<std::unique_ptr<Ring>> rings_;
  std::atomic<std::uint64_t> dropped_{0};
};

template <typename Fn>
std::size_t LaunchQueue::drain(Fn&& fn) {
  std::vector<Ring*> rings;
  {
    std::lock_guard lock(rings_mutex_);
    for (const auto& ring : rings_) rings.push_back(ring.get());
  }
  std::size_t drained = 0;
  for (Ring* ring : rings) {
    const std::uint64_t head = ring->head.load(std::memory_order_acquire);
    std::uint64_t tail = ring->tail.load(std::memory_order_relaxed);
    for (; tail != head; ++tail, ++drained) fn(ring->slots[tail % kRingCapacity]);
    ring->tail.store(tail, std::memory_order_release);
  }
  return drained;
}

}  // namespace deepum::core
