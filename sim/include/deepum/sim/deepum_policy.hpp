// The deepum policy: DeepUM's correlation prefetcher (deepum::prefetch::PrefetchPlanner, the code
// the library runs) driving the simulated GPU. Before each kernel it hands the planner the kernel's
// launch (execution key and pointer blocks), asks it for a plan over the simulated residency and
// carries the plan out through the Executor (discard, evict, prefetch, in that order), on the copy
// path, so transfers overlap compute. The demand faults of a kernel go to the planner as they
// happen and, once the kernel ends, as its faulted blocks. Each block a plan prefetched is judged
// once: timely (on the GPU and arrived when a kernel needing it started), late (still on its way),
// or wasted (left the GPU before any kernel used it); the planner adapts its lookahead to that.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "deepum/prefetch/prefetch_planner.hpp"
#include "deepum/sim/engine.hpp"

namespace deepum::sim {

struct DeepumPolicyStats {
  std::uint64_t plans = 0;
  std::uint64_t timely = 0;
  std::uint64_t late = 0;
  std::uint64_t wasted = 0;
};

class DeepumPolicy final : public Policy {
 public:
  // headroom_bytes in `options` is capped at an eighth of the GPU (at least one block) when the
  // run starts: the planner's default (256 MB) would leave a small simulated GPU nothing to plan.
  explicit DeepumPolicy(const prefetch::PrefetchOptions& options = {}) : options_(options) {}
  std::string_view name() const override { return "deepum"; }
  void begin(Executor& executor) override;
  void before_kernel(std::uint32_t k, Executor& executor) override;
  void after_kernel(std::uint32_t k, Executor& executor) override;
  void on_fault(std::uint32_t k, BlockIndex block) override;
  void on_vacated(BlockIndex block) override;

  const DeepumPolicyStats& stats() const { return stats_; }
  // The planner's lookahead now (after the run: where the outcomes left it).
  std::size_t lookahead() const { return planner_ ? planner_->lookahead() : options_.lookahead; }

 private:
  class Residency;
  // The block's dense index, or nullopt for an address the workload never touches.
  std::optional<BlockIndex> index_of(core::BlockId block) const;
  void judge(BlockIndex block, prefetch::PrefetchOutcome outcome);

  prefetch::PrefetchOptions options_;
  std::optional<prefetch::PrefetchPlanner> planner_;
  const Workload* workload_ = nullptr;
  std::size_t next_release_ = 0;
  std::vector<std::uint8_t> pending_;  // prefetched by a plan, not yet judged
  std::vector<core::BlockId> faulted_;
  std::vector<BlockIndex> blocks_;
  std::vector<core::AddressRange> dead_;
  DeepumPolicyStats stats_;
};

}  // namespace deepum::sim
