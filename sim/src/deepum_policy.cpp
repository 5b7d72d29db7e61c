#include "deepum/sim/deepum_policy.hpp"

#include <algorithm>

namespace deepum::sim {

namespace {
constexpr std::uint64_t kBlock = core::kBlockBytes;
}

// The simulated GPU as the planner sees it. The current kernel's blocks are not offered as victims:
// the driver would not evict them while the kernel is about to run (Executor::evict skips them).
class DeepumPolicy::Residency final : public prefetch::ResidencyView {
 public:
  Residency(const DeepumPolicy& policy, const Executor& executor) : policy_(policy), executor_(executor) {}
  bool is_resident(core::BlockId block) const override {
    const std::optional<BlockIndex> index = policy_.index_of(block);
    return index && executor_.on_gpu(*index);
  }
  std::uint64_t resident_bytes() const override { return executor_.occupied_blocks() * kBlock; }
  std::uint64_t limit_bytes() const override { return executor_.capacity_blocks() * kBlock; }
  void visit_least_recently_used(const std::function<bool(core::BlockId)>& visit) const override {
    const std::vector<core::BlockId>& ids = executor_.workload().block_ids;
    executor_.visit_least_recently_used([&](BlockIndex b) { return executor_.pinned(b) || visit(ids[b]); });
  }

 private:
  const DeepumPolicy& policy_;
  const Executor& executor_;
};

std::optional<BlockIndex> DeepumPolicy::index_of(core::BlockId block) const {
  const std::vector<core::BlockId>& ids = workload_->block_ids;
  const auto it = std::lower_bound(ids.begin(), ids.end(), block);
  if (it == ids.end() || *it != block) return std::nullopt;
  return static_cast<BlockIndex>(it - ids.begin());
}

void DeepumPolicy::begin(Executor& executor) {
  workload_ = &executor.workload();
  prefetch::PrefetchOptions options = options_;
  const std::uint64_t eighth = std::max<std::uint64_t>(executor.capacity_blocks() / 8, 1) * kBlock;
  options.headroom_bytes = std::min(options.headroom_bytes, eighth);
  planner_.emplace(options);
  next_release_ = 0;
  pending_.assign(workload_->block_count(), 0);
  faulted_.clear();
  stats_ = {};
}

void DeepumPolicy::judge(BlockIndex block, prefetch::PrefetchOutcome outcome) {
  pending_[block] = 0;
  switch (outcome) {
    case prefetch::PrefetchOutcome::timely:
      ++stats_.timely;
      break;
    case prefetch::PrefetchOutcome::late:
      ++stats_.late;
      break;
    case prefetch::PrefetchOutcome::wasted:
      ++stats_.wasted;
      break;
  }
  planner_->on_prefetch_outcome(outcome);
}

void DeepumPolicy::before_kernel(std::uint32_t k, Executor& executor) {
  const Workload& w = *workload_;
  const KernelStep& step = w.kernels[k];
  faulted_.clear();

  // What the program freed since the last plan (the engine has already dropped those blocks).
  dead_.clear();
  for (; next_release_ < w.releases.size() && w.releases[next_release_].before_kernel <= k; ++next_release_) {
    const BlockRelease& release = w.releases[next_release_];
    dead_.push_back({core::block_base(w.block_ids[release.first]), std::uint64_t{release.count} * kBlock});
  }

  // Copies and memsets carry no launch (no execution key): they only fault.
  if (step.execution_key != 0) {
    core::KernelLaunch launch;
    launch.correlation_id = std::uint64_t{k} + 1;  // unique per kernel, unlike a copy's API id
    launch.execution_key = step.execution_key;
    const std::span<const BlockIndex> pointers = w.pointers_of(k);
    const std::size_t count = std::min(pointers.size(), launch.pointers.size());
    launch.pointer_count = static_cast<std::uint16_t>(count);
    launch.pointers_truncated = pointers.size() > count;
    for (std::size_t i = 0; i < count; ++i) launch.pointers[i] = core::block_base(w.block_ids[pointers[i]]);
    planner_->on_launch(launch);
  }

  const Residency residency(*this, executor);
  const prefetch::Plan plan = planner_->plan(residency, dead_);
  ++stats_.plans;

  const auto to_blocks = [this](std::span<const core::AddressRange> ranges) {
    blocks_.clear();
    for (const core::AddressRange& range : ranges) {
      // Whole blocks only: a partial block (discard ranges may be unaligned) still holds live data.
      const core::BlockId first = core::block_of(range.address + kBlock - 1);
      const core::BlockId end = core::block_of(range.address + range.bytes);
      for (core::BlockId block = first; block < end; ++block) {
        if (const std::optional<BlockIndex> index = index_of(block)) blocks_.push_back(*index);
      }
    }
    return std::span<const BlockIndex>(blocks_);
  };
  executor.discard(to_blocks(plan.discard));
  executor.evict(to_blocks(plan.evict));
  const std::span<const BlockIndex> fetches = to_blocks(plan.prefetch);
  std::vector<BlockIndex> arriving;
  for (BlockIndex b : fetches) {
    if (!executor.on_gpu(b)) arriving.push_back(b);
  }
  executor.prefetch(fetches);
  for (BlockIndex b : arriving) {
    if (executor.on_gpu(b)) pending_[b] = 1;
  }

  // The kernel's prefetched blocks: on the GPU and usable as it starts, or still on their way.
  for (BlockIndex b : w.blocks_of(k)) {
    if (pending_[b] == 0) continue;
    const bool timely = executor.on_gpu(b) && executor.ready_time(b) <= executor.now();
    judge(b, timely ? prefetch::PrefetchOutcome::timely : prefetch::PrefetchOutcome::late);
  }
}

void DeepumPolicy::on_fault(std::uint32_t k, BlockIndex block) {
  (void)k;
  const core::BlockId id = workload_->block_ids[block];
  faulted_.push_back(id);
  planner_->on_fault(id);
}

void DeepumPolicy::after_kernel(std::uint32_t k, Executor& executor) {
  (void)executor;
  if (workload_->kernels[k].execution_key != 0) planner_->on_kernel_complete(std::uint64_t{k} + 1, faulted_);
}

void DeepumPolicy::on_vacated(BlockIndex block) {
  if (pending_[block] != 0) judge(block, prefetch::PrefetchOutcome::wasted);
}

}  // namespace deepum::sim
