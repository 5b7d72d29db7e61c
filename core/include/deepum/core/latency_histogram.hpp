// LatencyHistogram: durations counted in fixed buckets a quarter of an octave wide, with relaxed
// atomics, so every launch on the program's threads can be timed into it (one increment per
// bucket, count, total and, rarely, the maximum). Percentiles come out to within a bucket: the
// value reported is the bucket's upper bound (capped at the largest value seen), at most 25% above
// the true one.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace deepum::core {

// What a histogram holds, as plain numbers.
struct LatencySummary {
  std::uint64_t count = 0;
  std::uint64_t total_ns = 0;
  std::uint64_t p50_ns = 0, p99_ns = 0, max_ns = 0;
  // Every bucket that holds a value: (upper bound in ns, exclusive; count), in ascending order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> buckets;
};

class LatencyHistogram {
 public:
  // Values 0-3 have a bucket each; from 4 on, each power of two is split in four.
  static constexpr std::size_t kSubBuckets = 4;
  static constexpr std::size_t kBuckets = 4 + 62 * kSubBuckets;

  void record(std::uint64_t ns) noexcept;
  LatencySummary summary() const;

  static std::size_t bucket_of(std::uint64_t ns) noexcept;
  // The smallest value above the bucket (UINT64_MAX for the last one).
  static std::uint64_t upper_bound(std::size_t bucket) noexcept;

 private:
  std::array<std::atomic<std::uint64_t>, kBuckets> counts_{};
  std::atomic<std::uint64_t> count_{0}, total_{0}, max_{0};
};

}  // namespace deepum::core
