#include "deepum/core/statistics.hpp"

#include <fmt/format.h>

namespace deepum::core {

void Statistics::count_allocated(InterceptedApi api, std::uint64_t bytes) {
  at(api).bytes.fetch_add(bytes, std::memory_order_relaxed);
  managed_allocations_.fetch_add(1, std::memory_order_relaxed);
  managed_bytes_total_.fetch_add(bytes, std::memory_order_relaxed);
}

StatisticsSnapshot Statistics::snapshot() const {
  StatisticsSnapshot out;
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) {
    out.per_api[i].calls = per_api_[i].calls.load(std::memory_order_relaxed);
    out.per_api[i].refused = per_api_[i].refused.load(std::memory_order_relaxed);
    out.per_api[i].failed = per_api_[i].failed.load(std::memory_order_relaxed);
    out.per_api[i].bytes = per_api_[i].bytes.load(std::memory_order_relaxed);
  }
  out.managed_allocations = managed_allocations_.load(std::memory_order_relaxed);
  out.managed_bytes_total = managed_bytes_total_.load(std::memory_order_relaxed);
  out.passthrough_frees = passthrough_frees_.load(std::memory_order_relaxed);
  out.entry_points_via_dlsym = via_dlsym_.load(std::memory_order_relaxed);
  out.entry_points_via_get_proc_address = via_gpa_.load(std::memory_order_relaxed);
  return out;
}

void Statistics::reset() {
  for (auto& c : per_api_) {
    c.calls = 0;
    c.refused = 0;
    c.failed = 0;
    c.bytes = 0;
  }
  managed_allocations_ = 0;
  managed_bytes_total_ = 0;
  passthrough_frees_ = 0;
  via_dlsym_ = 0;
  via_gpa_ = 0;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kUnits[unit]);
}

}  // namespace deepum::core
