#include "deepum/core/allocation_service.hpp"

#include <algorithm>
#include <thread>

namespace deepum::core {

void AllocationService::resolve_limits(int device, const config::DeviceMemory& memory) {
  Device& d = at(device);
  const config::ResolvedLimits limits = config::resolve_limits(config_, memory);
  d.total.store(memory.total_bytes, std::memory_order_relaxed);
  d.budget.set_limit(limits.alloc_bytes);
  d.resident_limit.store(limits.resident_bytes, std::memory_order_relaxed);
  d.held.store(limits.held, std::memory_order_relaxed);
  d.resolved.store(true, std::memory_order_release);
}

bool AllocationService::resolve_limits_once(int device, const config::DeviceMemory& memory) {
  Device& d = at(device);
  if (d.claimed.exchange(true, std::memory_order_acq_rel)) {
    while (!d.resolved.load(std::memory_order_acquire)) std::this_thread::yield();
    return false;
  }
  resolve_limits(device, memory);
  return true;
}

std::vector<int> AllocationService::devices_used() const {
  std::vector<int> used;
  for (int device = 0; device < kMaxDevices; ++device) {
    if (limits_resolved(device)) used.push_back(device);
  }
  return used;
}

DeviceMemoryInfo AllocationService::device_view(int device) const {
  const AllocationBudget& budget = at(device).budget;
  const std::uint64_t limit = budget.limit();
  const std::uint64_t in_use = std::min(budget.in_use(), limit);
  return DeviceMemoryInfo{limit - in_use, limit};
}

StatisticsSnapshot AllocationService::snapshot() const {
  StatisticsSnapshot s = stats_.snapshot();
  s.live_managed_allocations = registry_.live_count();
  s.live_managed_bytes = registry_.live_bytes();
  // Across devices: the peaks of each (a bound on the peak of their sum), and the limits of the
  // first device the process used (a rank of a distributed job may use device 1 alone), which the
  // summary names per device where there are several.
  s.peak_managed_bytes = 0;
  for (const Device& device : devices_) s.peak_managed_bytes += device.budget.peak();
  const std::vector<int> used = devices_used();
  const int first = used.empty() ? 0 : used.front();
  s.alloc_limit_bytes = limits_resolved(first) ? alloc_limit_bytes(first) : 0;
  s.resident_limit_bytes = resident_limit_bytes(first);
  s.device_total_bytes = device_total_bytes(first);
  if (used.size() > 1) {
    for (int device : used)
      s.devices.push_back({device, alloc_limit_bytes(device), peak_managed_bytes(device)});
  }
  return s;
}

void AllocationService::forget_all() {
  registry_.clear();
  for (Device& device : devices_) device.budget.reset();
  stats_.reset();
}

void AllocationService::forget_device(int device) {
  registry_.forget_device(clamp(device));
  at(device).budget.release_all();
}

}  // namespace deepum::core
