// AllocationService: the decisions every intercepted allocation and free goes through, with the
// vendor calls injected as callables so the logic is the same for the runtime and the driver API
// and can be tested without a GPU. Status is the API's own error type (cudaError_t, CUresult), so
// the program always sees a real CUDA error code.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/limits.hpp"
#include "deepum/core/allocation_budget.hpp"
#include "deepum/core/managed_registry.hpp"
#include "deepum/core/statistics.hpp"

namespace deepum::core {

template <typename Status>
struct StatusCodes {
  Status success;
  Status out_of_memory;
};

struct DeviceMemoryInfo {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};

// Why an allocation was refused, for the one log line that explains it.
struct Refusal {
  InterceptedApi api;
  std::uint64_t requested_bytes;
  std::uint64_t in_use_bytes;
  std::uint64_t limit_bytes;
};

// Every device has its own limits: a percentage resolves against that device's memory, and what a
// program allocates while a device is current counts against that device's allocation limit.
class AllocationService {
 public:
  // Devices with limits of their own; allocations on devices past these count against the last.
  static constexpr int kMaxDevices = 64;

  AllocationService(const config::Config& config, Statistics& stats, ManagedRegistry& registry)
      : config_(config), stats_(stats), registry_(registry) {}

  // Limits written as a share of device memory resolve against `device`'s physical total; an
  // automatic resident limit against its free memory too (config::resolve_limits).
  void resolve_limits(std::uint64_t device_total_bytes) {
    resolve_limits(0, {device_total_bytes, device_total_bytes});
  }
  void resolve_limits(int device, const config::DeviceMemory& memory);
  // The same where threads race to it: true for the one that resolved; the others return once it
  // has.
  bool resolve_limits_once(int device, const config::DeviceMemory& memory);
  // Device 0's figures, or the given device's.
  bool limits_resolved(int device = 0) const { return at(device).resolved.load(std::memory_order_acquire); }
  std::uint64_t alloc_limit_bytes(int device = 0) const { return at(device).budget.limit(); }
  std::uint64_t resident_limit_bytes(int device = 0) const {
    return at(device).resident_limit.load(std::memory_order_relaxed);
  }
  // Whether deepum holds the resident limit on `device` (below its memory, mode not driver).
  bool holds_resident_limit(int device = 0) const { return at(device).held.load(std::memory_order_relaxed); }
  std::uint64_t device_total_bytes(int device = 0) const {
    return at(device).total.load(std::memory_order_relaxed);
  }
  std::uint64_t peak_managed_bytes(int device = 0) const { return at(device).budget.peak(); }
  std::uint64_t managed_bytes_in_use(int device = 0) const { return at(device).budget.in_use(); }
  // Devices whose limits were resolved (a program allocated there).
  std::vector<int> devices_used() const;

  // What cudaMemGetInfo/cuMemGetInfo answer: the allocation limit is the device the program sees.
  DeviceMemoryInfo device_view(int device = 0) const;

  // Admits `bytes` under `device`'s limit, calls allocate_managed(bytes, &base) and records the
  // range. `on_refused(Refusal)` runs when the limit says no.
  template <typename Status, typename AllocateManaged, typename OnRefused>
  Status allocate(InterceptedApi api, std::uint64_t bytes, std::uintptr_t* base_out,
                  const StatusCodes<Status>& codes, AllocateManaged&& allocate_managed,
                  OnRefused&& on_refused, int device = 0) {
    stats_.count_call(api);
    AllocationBudget& budget = at(device).budget;
    if (!budget.try_reserve(bytes)) {
      stats_.count_refused(api);
      on_refused(Refusal{api, bytes, budget.in_use(), budget.limit()});
      return codes.out_of_memory;
    }
    std::uintptr_t base = 0;
    const Status status = allocate_managed(bytes, &base);
    if (status != codes.success) {
      budget.release(bytes);
      stats_.count_failed(api);
      return status;
    }
    registry_.insert(ManagedRange{base, bytes, api, clamp(device)});
    stats_.count_allocated(api, bytes);
    *base_out = base;
    return status;
  }

  // Frees `base`: if deepum allocated it, through release_managed(range) and the limit is
  // credited; otherwise through pass_through(base), untouched. The range leaves the registry
  // before the memory is released so a concurrent allocation reusing the address never collides.
  template <typename Status, typename ReleaseManaged, typename PassThrough>
  Status free(InterceptedApi api, std::uintptr_t base, const StatusCodes<Status>& codes,
              ReleaseManaged&& release_managed, PassThrough&& pass_through) {
    stats_.count_call(api);
    std::optional<ManagedRange> range = registry_.erase(base);
    if (!range) {
      stats_.count_passthrough_free();
      const Status status = pass_through(base);
      if (status != codes.success) stats_.count_failed(api);
      return status;
    }
    const Status status = release_managed(*range);
    if (status != codes.success) {
      registry_.insert(*range);
      stats_.count_failed(api);
      return status;
    }
    at(range->device).budget.release(range->bytes);
    return status;
  }

  // The statistics with the registry's and the limit's figures filled in.
  StatisticsSnapshot snapshot() const;
  // After fork: the child owns no CUDA context, so none of the parent's ranges are its own.
  void forget_all();
  // `device`'s context was reset: its memory is freed, its allocation limit credited.
  void forget_device(int device);

 private:
  struct Device {
    AllocationBudget budget;
    std::atomic<std::uint64_t> resident_limit{0};
    std::atomic<std::uint64_t> total{0};
    std::atomic<bool> held{false};
    std::atomic<bool> resolved{false};
    std::atomic<bool> claimed{false};  // resolve_limits_once
  };
  static int clamp(int device) { return device < 0 ? 0 : device >= kMaxDevices ? kMaxDevices - 1 : device; }
  Device& at(int device) { return devices_[static_cast<std::size_t>(clamp(device))]; }
  const Device& at(int device) const { return devices_[static_cast<std::size_t>(clamp(device))]; }

  const config::Config& config_;
  Statistics& stats_;
  ManagedRegistry& registry_;
  std::array<Device, kMaxDevices> devices_;
};

}  // namespace deepum::core
