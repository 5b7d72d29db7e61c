#include "deepum/core/allocation_budget.hpp"

namespace deepum::core {

bool AllocationBudget::try_reserve(std::uint64_t bytes) {
  std::uint64_t current = in_use_.load(std::memory_order_relaxed);
  const std::uint64_t limit = limit_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || current > limit - bytes) return false;
  } while (!in_use_.compare_exchange_weak(current, current + bytes, std::memory_order_relaxed));
  const std::uint64_t now = current + bytes;
  std::uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return true;
}

void AllocationBudget::release(std::uint64_t bytes) {
  std::uint64_t current = in_use_.load(std::memory_order_relaxed);
  // Saturate rather than wrap: a double release is a bug elsewhere, not a reason to lift the limit.
  while (!in_use_.compare_exchange_weak(current, current >= bytes ? current - bytes : 0,
                                        std::memory_order_relaxed)) {
  }
}

void AllocationBudget::reset() {
  in_use_.store(0, std::memory_order_relaxed);
  peak_.store(0, std::memory_order_relaxed);
}

}  // namespace deepum::core
