// A HintExecutor for tests: records what it is asked to do and keeps a simulated GPU's residency,
// so a test can check what the GPU would really hold.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "deepum/core/hint_executor.hpp"

namespace deepum::test {

struct RecordingExecutor : core::HintExecutor {
  std::vector<core::AddressRange> evicted;  // synchronous (reactive) evictions
  std::vector<core::HintPlan> plans;        // submitted plans
  std::set<core::BlockId> gpu;              // blocks the simulated GPU holds
  std::size_t peak_gpu_blocks = 0;
  std::uint64_t evicting = 0;     // what evictions_in_flight_bytes() answers
  std::uint64_t prefetching = 0;  // what prefetches_in_flight_bytes() answers

  bool evict_to_host(std::span<const core::AddressRange> ranges) override {
    evicted.insert(evicted.end(), ranges.begin(), ranges.end());
    for (const auto& range : ranges) drop(range);
    return true;
  }
  bool submit(const core::HintPlan& plan) override {
    if (evicting != 0 && !(plan.evict.empty() && plan.discard.empty())) return false;
    if (prefetching != 0 && !plan.prefetch.empty()) return false;
    plans.push_back(plan);
    for (const auto& range : plan.discard) drop(range);
    for (const auto& range : plan.evict) drop(range);
    for (const auto& range : plan.prefetch) {
      for (core::BlockId b = core::block_of(range.address);
           b <= core::block_of(range.address + range.bytes - 1); ++b)
        gpu.insert(b);
    }
    peak_gpu_blocks = std::max(peak_gpu_blocks, gpu.size());
    return true;
  }
  std::uint64_t evictions_in_flight_bytes() override { return evicting; }
  std::uint64_t prefetches_in_flight_bytes() override { return prefetching; }
  std::optional<std::uint64_t> device_used_bytes() override { return std::nullopt; }

  // The simulated GPU faults a block in.
  void fault_in(core::BlockId block) {
    gpu.insert(block);
    peak_gpu_blocks = std::max(peak_gpu_blocks, gpu.size());
  }

 private:
  void drop(const core::AddressRange& range) {
    if (range.bytes == 0) return;
    for (core::BlockId b = core::block_of(range.address);
         b <= core::block_of(range.address + range.bytes - 1); ++b)
      gpu.erase(b);
  }
};

}  // namespace deepum::test
