// AllocationService: the decisions every intercepted allocation and free goes through, with the
// vendor calls injected as callables so the logic is the same for the runtime and the driver API
// and can be tested without a GPU. Status is the API's own error type (cudaError_t, CUresult), so
// the program always sees a real CUDA error code.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

#include "deepum/config/config.hpp"
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

class AllocationService {
 public:
  AllocationService(const config::Config& config, Statistics& stats, ManagedRegistry& registry)
      : config_(config), stats_(stats), registry_(registry) {}

  // Limits written as a share of device memory resolve against the first device's physical total.
  void resolve_limits(std::uint64_t device_total_bytes);
  bool limits_resolved() const { return resolved_.load(std::memory_order_acquire); }
  std::uint64_t alloc_limit_bytes() const { return budget_.limit(); }
  std::uint64_t resident_limit_bytes() const { return resident_limit_bytes_.load(std::memory_order_relaxed); }
  std::uint64_t device_total_bytes() const { return device_total_bytes_.load(std::memory_order_relaxed); }
  std::uint64_t peak_managed_bytes() const { return budget_.peak(); }
  std::uint64_t managed_bytes_in_use() const { return budget_.in_use(); }

  // What cudaMemGetInfo/cuMemGetInfo answer: the allocation limit is the device the program sees.
  DeviceMemoryInfo device_view() const;

  // Admits `bytes` under the limit, calls allocate_managed(bytes, &base) and records the range.
  // `on_refused(Refusal)` runs when the limit says no.
  template <typename Status, typename AllocateManaged, typename OnRefused>
  Status allocate(InterceptedApi api, std::uint64_t bytes, std::uintptr_t* base_out,
                  const StatusCodes<Status>& codes, AllocateManaged&& allocate_managed,
                  OnRefused&& on_refused) {
    stats_.count_call(api);
    if (!budget_.try_reserve(bytes)) {
      stats_.count_refused(api);
      on_refused(Refusal{api, bytes, budget_.in_use(), budget_.limit()});
      return codes.out_of_memory;
    }
    std::uintptr_t base = 0;
    const Status status = allocate_managed(bytes, &base);
    if (status != codes.success) {
      budget_.release(bytes);
      stats_.count_failed(api);
      return status;
    }
    registry_.insert(ManagedRange{base, bytes, api});
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
    budget_.release(range->bytes);
    return status;
  }

  // The statistics with the registry's and the limit's figures filled in.
  StatisticsSnapshot snapshot() const;
  // After fork: the child owns no CUDA context, so none of the parent's ranges are its own.
  void forget_all();

 private:
  const config::Config& config_;
  Statistics& stats_;
  ManagedRegistry& registry_;
  AllocationBudget budget_;
  std::atomic<std::uint64_t> resident_limit_bytes_{0};
  std::atomic<std::uint64_t> device_total_bytes_{0};
  std::atomic<bool> resolved_{false};
};

}  // namespace deepum::core
