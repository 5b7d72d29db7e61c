#include "deepum/core/latency_histogram.hpp"

#include <algorithm>
#include <bit>

namespace deepum::core {

std::size_t LatencyHistogram::bucket_of(std::uint64_t ns) noexcept {
  if (ns < 4) return static_cast<std::size_t>(ns);
  const auto octave = static_cast<std::size_t>(std::bit_width(ns)) - 1;  // 2 or more
  const auto quarter = static_cast<std::size_t>((ns >> (octave - 2)) & 3);
  return kSubBuckets * (octave - 1) + quarter;
}

std::uint64_t LatencyHistogram::upper_bound(std::size_t bucket) noexcept {
  if (bucket < 4) return bucket + 1;
  const std::size_t octave = bucket / kSubBuckets + 1;
  const std::uint64_t quarter = bucket % kSubBuckets;
  if (octave == 63 && quarter == 3) return UINT64_MAX;
  return (5 + quarter) << (octave - 2);
}

void LatencyHistogram::record(std::uint64_t ns) noexcept {
  counts_[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  total_.fetch_add(ns, std::memory_order_relaxed);
  std::uint64_t seen = max_.load(std::memory_order_relaxed);
  while (ns > seen && !max_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

LatencySummary LatencyHistogram::summary() const {
  LatencySummary out;
  out.total_ns = total_.load(std::memory_order_relaxed);
  out.max_ns = max_.load(std::memory_order_relaxed);
  std::array<std::uint64_t, kBuckets> counts{};
  for (std::size_t b = 0; b < kBuckets; ++b) {
    counts[b] = counts_[b].load(std::memory_order_relaxed);
    out.count += counts[b];  // from the buckets: the percentiles below agree with it
    if (counts[b] != 0) out.buckets.emplace_back(upper_bound(b), counts[b]);
  }
  const auto quantile = [&](double q) -> std::uint64_t {
    if (out.count == 0) return 0;
    const auto rank =
        std::max<std::uint64_t>(1, static_cast<std::uint64_t>(q * static_cast<double>(out.count) + 0.5));
    std::uint64_t seen = 0;
    for (std::size_t b = 0; b < kBuckets; ++b) {
      seen += counts[b];
      if (seen >= rank) return std::min(upper_bound(b), out.max_ns);
    }
    return out.max_ns;
  };
  out.p50_ns = quantile(0.5);
  out.p99_ns = quantile(0.99);
  return out;
}

}  // namespace deepum::core
