#include "deepum/core/allocation_service.hpp"

#include <algorithm>

namespace deepum::core {

void AllocationService::resolve_limits(std::uint64_t device_total_bytes) {
  device_total_bytes_.store(device_total_bytes, std::memory_order_relaxed);
  budget_.set_limit(config_.alloc_limit.resolve(device_total_bytes));
  resident_limit_bytes_.store(config_.resident_limit.resolve(device_total_bytes), std::memory_order_relaxed);
  resolved_.store(true, std::memory_order_release);
}

DeviceMemoryInfo AllocationService::device_view() const {
  const std::uint64_t limit = budget_.limit();
  const std::uint64_t in_use = std::min(budget_.in_use(), limit);
  return DeviceMemoryInfo{limit - in_use, limit};
}

StatisticsSnapshot AllocationService::snapshot() const {
  StatisticsSnapshot s = stats_.snapshot();
  s.live_managed_allocations = registry_.live_count();
  s.live_managed_bytes = registry_.live_bytes();
  s.peak_managed_bytes = budget_.peak();
  s.alloc_limit_bytes = limits_resolved() ? budget_.limit() : 0;
  s.resident_limit_bytes = resident_limit_bytes();
  return s;
}

void AllocationService::forget_all() {
  registry_.clear();
  budget_.reset();
  stats_.reset();
}

}  // namespace deepum::core
