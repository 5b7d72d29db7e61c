#include "deepum/prefetch/planner_policy.hpp"

#include <algorithm>
#include <vector>

namespace deepum::prefetch {
namespace {

// The pipeline's ResidencyMap as the planner sees it.
class ResidencyMapView final : public ResidencyView {
 public:
  ResidencyMapView(const core::ResidencyMap& map, std::uint64_t limit) : map_(map), limit_(limit) {}
  // A block counts as resident once the pages the program touches of it are: a prefetch moves those
  // (ResidencyMap::touched_parts), so blocks the program uses in part are held in part.
  bool is_resident(BlockId block) const override { return map_.touched_resident(block); }
  std::uint64_t footprint_bytes(BlockId block) const override { return map_.touched_bytes(block); }
  std::uint64_t resident_bytes_of(BlockId block) const override { return map_.resident_bytes_of(block); }
  std::uint64_t resident_bytes() const override { return map_.resident_bytes(); }
  std::uint64_t limit_bytes() const override { return limit_; }
  void visit_least_recently_used(const std::function<bool(BlockId)>& visit) const override {
    map_.visit_least_recently_used(visit);
  }

 private:
  const core::ResidencyMap& map_;
  std::uint64_t limit_;
};

template <typename Fn>
void for_each_block(std::span<const AddressRange> ranges, Fn&& fn) {
  for (const AddressRange& range : ranges) core::for_each_block_of(range, fn);
}

}  // namespace

PlannerPolicy::PlannerPolicy(const PolicyOptions& options)
    : options_(options), planner_([&] {
        PrefetchOptions planner = options.planner;
        if (options.adaptive_lookahead) {
          planner.min_lookahead = std::min(planner.min_lookahead, planner.lookahead);
          planner.max_lookahead = std::max(planner.max_lookahead, planner.lookahead);
        } else {
          planner.min_lookahead = planner.max_lookahead = planner.lookahead;
        }
        return planner;
      }()) {}

void PlannerPolicy::judge(PrefetchOutcome outcome) {
  switch (outcome) {
    case PrefetchOutcome::timely:
      ++stats_.timely;
      break;
    case PrefetchOutcome::late:
      ++stats_.late;
      break;
    case PrefetchOutcome::wasted:
      ++stats_.wasted;
      break;
  }
  planner_.on_prefetch_outcome(outcome);
}

void PlannerPolicy::on_fault(BlockId block) {
  ++(planner_.in_last_window(block) ? stats_.faults_in_window : stats_.faults_outside_window);
  if (unjudged_.erase(block) != 0) judge(PrefetchOutcome::late);
  planner_.on_fault(block);
}

core::HintPlan PlannerPolicy::plan(const core::ResidencyMap& residency, std::uint64_t resident_limit_bytes,
                                   bool may_evict, bool may_prefetch) {
  core::HintPlan plan = planner_.plan(ResidencyMapView(residency, resident_limit_bytes), {});
  stats_.window_blocks_max = std::max<std::uint64_t>(stats_.window_blocks_max, planner_.last_window_blocks());
  stats_.budget_blocks = planner_.budget_blocks(resident_limit_bytes);
  if (!options_.pre_evict || !may_evict) plan.evict.clear();
  if (!may_evict) plan.discard.clear();
  if (!may_prefetch) plan.prefetch.clear();
  for_each_block(plan.evict, [&](BlockId block) {
    if (unjudged_.erase(block) != 0) judge(PrefetchOutcome::wasted);
  });
  // The window has moved past these without a fault on them: they were there in time.
  std::vector<BlockId> passed;
  for (BlockId block : unjudged_) {
    if (!planner_.in_last_window(block)) passed.push_back(block);
  }
  for (BlockId block : passed) {
    unjudged_.erase(block);
    judge(PrefetchOutcome::timely);
  }
  for_each_block(plan.prefetch, [&](BlockId block) { unjudged_.insert(block); });
  return plan;
}

core::PrefetchStats PlannerPolicy::stats() const {
  core::PrefetchStats stats = stats_;
  stats.lookahead = planner_.lookahead();
  stats.resets = planner_.resets();
  return stats;
}

}  // namespace deepum::prefetch
