// PlannerPolicy: the PrefetchPlanner as the pipeline's HintPolicy. It shows the planner the
// pipeline's ResidencyMap, and judges each prefetched block (timely, late, wasted) so the planner
// can adapt its lookahead.
#pragma once

#include <unordered_set>

#include "deepum/core/hint_policy.hpp"
#include "deepum/prefetch/prefetch_planner.hpp"

namespace deepum::prefetch {

struct PolicyOptions {
  PrefetchOptions planner;
  bool pre_evict = true;           // evict ahead to make room; false leaves it to the safety net
  bool adaptive_lookahead = true;  // false keeps planner.lookahead fixed
};

class PlannerPolicy final : public core::HintPolicy {
 public:
  explicit PlannerPolicy(const PolicyOptions& options);

  void on_launch(const core::KernelLaunch& launch) override { planner_.on_launch(launch); }
  void on_range(const core::RangeEvent& event) override { planner_.on_range(event); }
  void on_fault(BlockId block) override;
  void on_kernel_executed(std::uint64_t correlation_id) override {
    planner_.on_kernel_executed(correlation_id);
  }
  void on_stream_progress(std::uint64_t stream, std::uint64_t correlation_id) override {
    planner_.on_stream_progress(stream, correlation_id);
  }
  void on_kernel_complete(std::uint64_t correlation_id, std::span<const BlockId> faulted) override {
    planner_.on_kernel_complete(correlation_id, faulted);
  }
  core::HintPlan plan(const core::ResidencyMap& residency, std::uint64_t resident_limit_bytes, bool may_evict,
                      bool may_prefetch) override;
  core::PrefetchStats stats() const override;
  bool evicts() const override { return options_.pre_evict; }

  const PrefetchPlanner& planner() const { return planner_; }

 private:
  void judge(PrefetchOutcome outcome);

  PolicyOptions options_;
  PrefetchPlanner planner_;
  // Blocks prefetched and not yet judged. A block is timely once the window has moved past it
  // without a fault on it, late if it faults first, wasted if a plan evicts it first.
  std::unordered_set<BlockId> unjudged_;
  core::PrefetchStats stats_;
};

}  // namespace deepum::prefetch
