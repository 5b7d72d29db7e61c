// GpuTimeAccount: where the GPU's time went, from CUPTI's records: how long kernels, copies and
// memsets ran, how long each waited after it could have run, and how long page faults were being
// served. A wait is measured from the later of the operation's launch (host time, CUPTI's clock)
// and the end of the work before it in its stream, to its start: the driver's launch latency (a
// few microseconds) natively, the program's own waits (events of other streams, host work between
// launches while the GPU idles), and under a resident limit the moves deepum ordered before it. The
// waits of operations deepum decided moves or waits for are also summed apart. Records may arrive
// out of order; an execution that starts before the end of the previous one in its stream waits
// nothing.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::core {

struct GpuTime {
  std::uint64_t executions = 0;          // kernels, copies and memsets seen
  std::uint64_t waits_measured = 0;      // of them, those whose launch time was known
  Timestamp busy_ns = 0;                 // their run times, summed over streams
  Timestamp waited_ns = 0;               // their waits, summed over streams
  Timestamp waited_behind_moves_ns = 0;  // ... of those launched behind deepum's moves
  Timestamp longest_wait_ns = 0;
  Timestamp fault_ns = 0;  // time with a page fault group being served (groups merged when they overlap)
  std::uint64_t fault_groups = 0;  // raised by kernels and copies, not by prefetches
  std::uint64_t faults = 0;
};

class GpuTimeAccount {
 public:
  // Launch times are remembered for the last `remembered_launches` correlation ids (a ring, so the
  // memory is fixed): an execution arriving later than that is counted, its wait not measured.
  explicit GpuTimeAccount(std::size_t remembered_launches = std::size_t{1} << 16);

  // `behind_moves`: deepum decided moves or waits for it (KernelLaunch::behind_moves).
  void on_launch(std::uint64_t correlation_id, Timestamp host_time, bool behind_moves = false);
  // Returns the execution's wait (0 when not measured).
  Timestamp on_execution(const KernelExecution& execution);
  // Overlapping groups count once. One arriving after a later one counts only its part after that
  // one's end: out of order, fault time is undercounted, never counted twice.
  void on_fault(const PageFault& fault);

  const GpuTime& totals() const { return totals_; }

 private:
  struct Launched {
    std::uint64_t correlation_id = 0;
    Timestamp host_time = 0;
    bool behind_moves = false;
  };
  std::vector<Launched> launched_;
  std::unordered_map<std::uint32_t, Timestamp> stream_end_;  // by CUPTI's stream id
  Timestamp faults_end_ = 0;
  GpuTime totals_;
};

}  // namespace deepum::core
