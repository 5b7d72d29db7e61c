// AllocationBudget: the configured limit on what the program may allocate, with lock-free
// reservation so concurrent allocating threads can never jointly overshoot it.
#pragma once

#include <atomic>
#include <cstdint>

namespace deepum::core {

class AllocationBudget {
 public:
  void set_limit(std::uint64_t limit_bytes) { limit_.store(limit_bytes, std::memory_order_relaxed); }
  std::uint64_t limit() const { return limit_.load(std::memory_order_relaxed); }

  // Reserves `bytes` if that keeps the total within the limit; false otherwise.
  bool try_reserve(std::uint64_t bytes);
  void release(std::uint64_t bytes);
  // Everything reserved is released (the memory is gone); the peak stays.
  void release_all() { in_use_.store(0, std::memory_order_relaxed); }

  std::uint64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  std::uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  void reset();

 private:
  std::atomic<std::uint64_t> limit_{UINT64_MAX};
  std::atomic<std::uint64_t> in_use_{0};
  std::atomic<std::uint64_t> peak_{0};
};

}  // namespace deepum::core
