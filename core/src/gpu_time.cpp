#include "deepum/core/gpu_time.hpp"

#include <algorithm>

namespace deepum::core {

GpuTimeAccount::GpuTimeAccount(std::size_t remembered_launches)
    : launched_(std::max<std::size_t>(remembered_launches, 1)) {}

void GpuTimeAccount::on_launch(std::uint64_t correlation_id, Timestamp host_time, bool behind_moves) {
  if (host_time == 0) return;
  launched_[correlation_id % launched_.size()] = {correlation_id, host_time, behind_moves};
}

Timestamp GpuTimeAccount::on_execution(const KernelExecution& execution) {
  ++totals_.executions;
  if (execution.end > execution.start) totals_.busy_ns += execution.end - execution.start;
  Timestamp& stream_end = stream_end_[execution.stream_id];
  const Timestamp previous_end = stream_end;
  stream_end = std::max(stream_end, execution.end);
  const Launched& launched = launched_[execution.correlation_id % launched_.size()];
  if (launched.correlation_id != execution.correlation_id || launched.host_time == 0) return 0;
  ++totals_.waits_measured;
  const Timestamp runnable = std::max(previous_end, launched.host_time);
  const Timestamp wait = execution.start > runnable ? execution.start - runnable : 0;
  totals_.waited_ns += wait;
  if (launched.behind_moves) totals_.waited_behind_moves_ns += wait;
  totals_.longest_wait_ns = std::max(totals_.longest_wait_ns, wait);
  return wait;
}

void GpuTimeAccount::on_fault(const PageFault& fault) {
  if (fault.access == FaultAccess::prefetch) return;  // a move's, not a kernel's
  ++totals_.fault_groups;
  totals_.faults += fault.fault_count;
  if (fault.end <= fault.start) return;
  const Timestamp from = std::max(fault.start, faults_end_);
  if (fault.end > from) totals_.fault_ns += fault.end - from;
  faults_end_ = std::max(faults_end_, fault.end);
}

}  // namespace deepum::core
