// Statistics: what deepum intercepted and allocated, counted with relaxed atomics on the hot path
// and rendered at exit by core/exit_report.hpp.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "deepum/core/intercepted_api.hpp"

namespace deepum::core {

struct ApiCounters {
  std::uint64_t calls = 0;    // times the program called it (outermost calls only)
  std::uint64_t refused = 0;  // allocations refused because they exceed the allocation limit
  std::uint64_t failed = 0;   // calls that returned a CUDA error from the driver or runtime
  std::uint64_t bytes = 0;    // bytes allocated through it (allocation calls only)
};

// A plain copy of the counters, for rendering and tests.
struct StatisticsSnapshot {
  std::array<ApiCounters, kInterceptedApiCount> per_api{};
  std::uint64_t managed_allocations = 0;
  std::uint64_t managed_bytes_total = 0;
  std::uint64_t live_managed_allocations = 0;
  std::uint64_t live_managed_bytes = 0;
  std::uint64_t peak_managed_bytes = 0;
  std::uint64_t passthrough_frees = 0;       // frees of memory deepum did not allocate
  std::uint64_t entry_points_via_dlsym = 0;  // driver functions substituted when looked up
  std::uint64_t entry_points_via_get_proc_address = 0;
  std::uint64_t alloc_limit_bytes = 0;
  std::uint64_t resident_limit_bytes = 0;
  std::uint64_t device_total_bytes = 0;  // the first device's memory (0: not known yet)
  // Where the program allocated on more than one device: each one's limit and peak.
  struct Device {
    int device = 0;
    std::uint64_t alloc_limit_bytes = 0, peak_managed_bytes = 0;
  };
  std::vector<Device> devices;
};

class Statistics {
 public:
  void count_call(InterceptedApi api) { at(api).calls.fetch_add(1, std::memory_order_relaxed); }
  void count_refused(InterceptedApi api) { at(api).refused.fetch_add(1, std::memory_order_relaxed); }
  void count_failed(InterceptedApi api) { at(api).failed.fetch_add(1, std::memory_order_relaxed); }
  void count_allocated(InterceptedApi api, std::uint64_t bytes);
  void count_passthrough_free() { passthrough_frees_.fetch_add(1, std::memory_order_relaxed); }
  void count_entry_point_via_dlsym() { via_dlsym_.fetch_add(1, std::memory_order_relaxed); }
  void count_entry_point_via_get_proc_address() { via_gpa_.fetch_add(1, std::memory_order_relaxed); }

  // Fills the per-API and entry-point counters; the caller adds registry and limit figures.
  StatisticsSnapshot snapshot() const;
  void reset();

 private:
  struct AtomicCounters {
    std::atomic<std::uint64_t> calls{0}, refused{0}, failed{0}, bytes{0};
  };
  AtomicCounters& at(InterceptedApi api) { return per_api_[static_cast<std::size_t>(api)]; }

  std::array<AtomicCounters, kInterceptedApiCount> per_api_{};
  std::atomic<std::uint64_t> managed_allocations_{0};
  std::atomic<std::uint64_t> managed_bytes_total_{0};
  std::atomic<std::uint64_t> passthrough_frees_{0};
  std::atomic<std::uint64_t> via_dlsym_{0};
  std::atomic<std::uint64_t> via_gpa_{0};
};

// Human-readable sizes: "1.50 GiB", "512.00 MiB", "123 B".
std::string format_bytes(std::uint64_t bytes);
}  // namespace deepum::core
