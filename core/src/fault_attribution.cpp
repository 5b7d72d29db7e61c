#include "deepum/core/fault_attribution.hpp"

#include <algorithm>

namespace deepum::core {

void FaultAttributor::on_launch(const KernelLaunch& launch) {
  // Launches whose execution never arrives (graphs, tracing without activity) must not pile up.
  constexpr std::size_t kMaxRemembered = std::size_t{1} << 20;
  if (launches_.size() >= kMaxRemembered) launches_.clear();
  launches_[launch.correlation_id] = LaunchSummary{launch.execution_key, launch.function};
}

void FaultAttributor::on_execution(const KernelExecution& execution) {
  executions_.emplace(execution.start, execution);
  newest_end_ = std::max(newest_end_, execution.end);
  longest_kernel_ = std::max(longest_kernel_, execution.end - execution.start);
}

void FaultAttributor::on_fault(const PageFault& fault) {
  ++stats_.faults;
  // Prefetch-type faults come from cudaMemPrefetchAsync (deepum's evictions among them), which
  // runs outside any kernel: they belong to no kernel.
  if (fault.access == FaultAccess::prefetch) {
    ++stats_.from_prefetch;
    return;
  }
  if (recording_paused_) {
    ++stats_.while_unrecorded;
    return;
  }
  pending_.push_back(fault);
}

const KernelExecution* FaultAttributor::covering(Timestamp time) const {
  // Candidates started no later than time + slack and no earlier than the longest kernel allows.
  const KernelExecution* best = nullptr;
  auto it = executions_.upper_bound(time + kSlackNs);
  while (it != executions_.begin()) {
    --it;
    const KernelExecution& execution = it->second;
    if (execution.start + longest_kernel_ + kSlackNs < time) break;
    if (execution.end + kSlackNs >= time) {
      // Several kernels overlap (concurrent streams): the one that started last is the one whose
      // accesses are freshest; the true owner is unknowable from timestamps alone.
      if (best == nullptr || execution.start > best->start) best = &execution;
    }
  }
  return best;
}

void FaultAttributor::forget_old_executions() {
  // Keep executions a pending fault could still need, and a window behind the newest.
  Timestamp keep_from = newest_end_ > kGiveUpNs ? newest_end_ - kGiveUpNs : 0;
  for (const PageFault& fault : pending_) keep_from = std::min(keep_from, fault.start);
  const Timestamp horizon =
      keep_from > longest_kernel_ + kSlackNs ? keep_from - longest_kernel_ - kSlackNs : 0;
  for (auto it = executions_.begin(); it != executions_.end() && it->first < horizon;) {
    launches_.erase(it->second.correlation_id);
    it = executions_.erase(it);
  }
}

}  // namespace deepum::core
