// FaultAttributor: which kernel each GPU page fault belongs to. CUPTI gives faults no stream or
// kernel, so a fault goes to the kernel whose execution interval holds its timestamp; the
// kernel's execution record leads to its launch through the correlation id, and so to its
// execution key. Copies and memsets (KernelExecution with operation memcpy / memset) cover faults
// the same way; they have no launch. Records of the two kinds arrive in any order, so faults wait
// until a covering execution is known or until it is clear none will come.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <unordered_map>

#include "deepum/core/events.hpp"

namespace deepum::core {

struct AttributionStats {
  std::uint64_t faults = 0;            // fault records seen
  std::uint64_t from_prefetch = 0;     // raised by a prefetch (deepum's or the program's), not a kernel
  std::uint64_t attributed = 0;        // given to a kernel or copy
  std::uint64_t unattributed = 0;      // given up: nothing ran at that time
  std::uint64_t while_unrecorded = 0;  // arrived while kernel records were paused
  std::uint64_t pending() const {
    return faults - from_prefetch - while_unrecorded - attributed - unattributed;
  }
};

struct LaunchSummary {
  std::uint64_t execution_key = 0;
  std::uint64_t function = 0;
};

class FaultAttributor {
 public:
  // A fault counts for a kernel if it lies within [start - slack, end + slack].
  static constexpr Timestamp kSlackNs = 20'000;
  // A fault older than the newest kernel end by more than this, still without a kernel, is given up.
  // Generous: CUPTI hands over fault records later than kernel records, seconds later under load.
  static constexpr Timestamp kGiveUpNs = 5'000'000'000;

  void on_launch(const KernelLaunch& launch);
  void on_execution(const KernelExecution& execution);
  void on_fault(const PageFault& fault);
  // While kernel records are paused no kernel can be found for a fault: count such faults apart.
  void set_recording_paused(bool paused) { recording_paused_ = paused; }

  // Attributes every pending fault that can be decided now; on_attributed(fault, execution,
  // launch) runs for each, with launch nullptr when the launch was not seen (tracing started late,
  // or a launch path without callbacks). `final` gives up on every fault still undecided.
  template <typename OnAttributed>
  void attribute(OnAttributed&& on_attributed, bool final = false);

  const AttributionStats& stats() const { return stats_; }

 private:
  const KernelExecution* covering(Timestamp time) const;
  void forget_old_executions();

  std::unordered_map<std::uint64_t, LaunchSummary> launches_;  // by correlation id
  std::multimap<Timestamp, KernelExecution> executions_;       // by start
  std::deque<PageFault> pending_;
  Timestamp newest_end_ = 0;
  bool recording_paused_ = false;
  Timestamp longest_kernel_ = 0;
  AttributionStats stats_;
};

template <typename OnAttributed>
void FaultAttributor::attribute(OnAttributed&& on_attributed, bool final) {
  std::deque<PageFault> still_pending;
  for (const PageFault& fault : pending_) {
    if (const KernelExecution* execution = covering(fault.start)) {
      auto launch = launches_.find(execution->correlation_id);
      on_attributed(fault, *execution, launch == launches_.end() ? nullptr : &launch->second);
      ++stats_.attributed;
    } else if (final || fault.start + kGiveUpNs < newest_end_) {
      ++stats_.unattributed;
    } else {
      still_pending.push_back(fault);
    }
  }
  pending_.swap(still_pending);
  forget_old_executions();
}

}  // namespace deepum::core
