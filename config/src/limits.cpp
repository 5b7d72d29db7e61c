#include "deepum/config/limits.hpp"

#include <algorithm>

namespace deepum::config {
namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kMinMargin = kGiB;
constexpr std::uint64_t kTotalShare = 16;  // the margin is at least total / kTotalShare

bool is_automatic(const SizeSpec& size) { return size == SizeSpec::of_bytes(0); }

}  // namespace

std::uint64_t capacity_margin(const DeviceMemory& memory) {
  const std::uint64_t wanted = std::max(kMinMargin, memory.total_bytes / kTotalShare);
  return std::min(wanted, std::min(memory.free_bytes, memory.total_bytes) / 2);
}

ResolvedLimits resolve_limits(const Config& config, const DeviceMemory& memory) {
  const std::uint64_t total = memory.total_bytes;
  ResolvedLimits limits;
  limits.alloc_bytes = config.alloc_limit.resolve(total);
  if (!is_automatic(config.resident_limit)) {
    limits.resident_bytes = config.resident_limit.resolve(total);
  } else if (limits.alloc_bytes > total && memory.free_bytes > 0) {
    limits.resident_automatic = true;
    limits.resident_bytes = std::min(memory.free_bytes, total) - capacity_margin(memory);
  } else {
    limits.resident_automatic = true;
    limits.resident_bytes = total;
  }
  limits.held = config.mode != Mode::driver && limits.resident_bytes < total;
  return limits;
}

std::optional<bool> holds_resident_limit(const Config& config) {
  if (config.mode == Mode::driver) return false;
  const SizeSpec& resident = config.resident_limit;
  if (!is_automatic(resident)) {
    if (!resident.is_percent()) return std::nullopt;
    return resident.percent() < 100.0;
  }
  if (!config.alloc_limit.is_percent()) return std::nullopt;
  return config.alloc_limit.percent() > 100.0;
}

}  // namespace deepum::config
