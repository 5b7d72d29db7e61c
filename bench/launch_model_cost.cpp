// launch_model_cost: what deciding evictions before launches (core::LaunchOrderedResidency, run in
// the launch callback when stream_ordered_eviction holds the resident limit) costs the program's
// thread per launch, on the CPU alone.
//
//   launch_model_cost [LAUNCHES]   (default 200000)
//
// A training-like loop: 1,000 tensors in 20 MiB segments (as PyTorch's caching allocator carves
// them), each launch naming three of them in a repeating order, the limit half of what the loop
// touches. Prints, by tensor size, the mean, the median and the 99th percentile of single launches
// (what the acceptance bounds: 5 us and 50 us at the median and p99), and the worst of batches of
// 1,000 launches.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "deepum/core/launch_ordered_residency.hpp"

namespace {

using deepum::core::KernelLaunch;
using deepum::core::LaunchOrderedResidency;
constexpr std::uint64_t kMiB = 1 << 20;

struct Result {
  double mean_ns = 0, median_ns = 0, p99_ns = 0, worst_batch_ns = 0;
  std::uint64_t evictions = 0;
};

// Tensors of `tensor_bytes` each, packed into 20 MiB segments (larger ones get a segment each).
Result run(std::uint64_t tensor_bytes, std::size_t launches) {
  constexpr std::size_t kTensors = 1000;
  constexpr std::uint64_t kBase = 0x7f0000000000;
  const std::uint64_t segment =
      std::max<std::uint64_t>(20 * kMiB, (tensor_bytes + 2 * kMiB - 1) / (2 * kMiB) * 2 * kMiB);
  const std::uint64_t per_segment = segment / tensor_bytes;
  std::vector<std::uint64_t> tensors;
  const std::uint64_t segments = (kTensors + per_segment - 1) / per_segment;
  const std::uint64_t footprint = segments * segment;
  LaunchOrderedResidency model(footprint / 2, footprint / 16);
  for (std::uint64_t s = 0; s < segments; ++s) {
    model.on_range_allocated(kBase + s * segment, segment);
    for (std::uint64_t t = 0; t < per_segment && tensors.size() < kTensors; ++t)
      tensors.push_back(kBase + s * segment + t * tensor_bytes);
  }
  Result result;
  double total_ns = 0;
  std::vector<std::int64_t> single_ns;  // each launch after the first batch (which warms up)
  single_ns.reserve(launches);
  const auto since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (std::size_t done = 0; done < launches; done += 1000) {
    const auto batch_start = std::chrono::steady_clock::now();
    for (std::size_t i = done; i < done + 1000; ++i) {
      KernelLaunch launch;
      launch.pointer_count = 3;
      for (std::size_t p = 0; p < 3; ++p) {
        launch.pointers[p] = tensors[(i * 3 + p * 7) % kTensors];
        launch.extents[p] = tensor_bytes;
      }
      const auto start = std::chrono::steady_clock::now();
      if (!model.before_launch(launch).evict.empty()) ++result.evictions;
      if (done > 0) single_ns.push_back(since(start));
    }
    const double ns = static_cast<double>(since(batch_start)) / 1000.0;
    total_ns += ns * 1000.0;
    if (done > 0) result.worst_batch_ns = std::max(result.worst_batch_ns, ns);
  }
  result.mean_ns = total_ns / static_cast<double>(launches);
  const auto percentile = [&](std::size_t per_mille) {
    auto at = single_ns.begin() + static_cast<std::ptrdiff_t>(single_ns.size() * per_mille / 1000);
    std::nth_element(single_ns.begin(), at, single_ns.end());
    return static_cast<double>(*at);
  };
  result.median_ns = percentile(500);
  result.p99_ns = percentile(990);
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) / 1000 * 1000 : 200000;
  if (launches < 2000) {
    std::fprintf(stderr, "launch_model_cost: at least 2000 launches\n");
    return 2;
  }
  std::printf("launches naming 3 tensors each, limit half the footprint; ns per launch\n");
  std::printf("%-14s %10s %10s %10s %16s %10s\n", "tensor size", "mean", "median", "p99", "worst 1k batch",
              "evictions");
  for (const std::uint64_t bytes : {64ull * 1024, 1ull * kMiB, 4ull * kMiB, 16ull * kMiB, 64ull * kMiB}) {
    const Result r = run(bytes, launches);
    std::printf("%10.2f MiB %10.0f %10.0f %10.0f %16.0f %10llu\n", static_cast<double>(bytes) / kMiB,
                r.mean_ns, r.median_ns, r.p99_ns, r.worst_batch_ns,
                static_cast<unsigned long long>(r.evictions));
  }
  return 0;
}
