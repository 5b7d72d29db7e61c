// HintPolicy: what decides deepum's hints beyond holding the resident limit. The prefetcher
// (prefetch/PlannerPolicy) is one; the pipeline feeds it what the tracer reports and asks it for a
// plan whenever the executor can take one. Pure C++, driven by the worker thread only.
#pragma once

#include <cstdint>
#include <span>

#include "deepum/core/events.hpp"
#include "deepum/core/hint_executor.hpp"
#include "deepum/core/residency_map.hpp"

namespace deepum::core {

struct PrefetchStats {
  std::uint64_t plans = 0;             // plans submitted with at least one hint
  std::uint64_t plan_failures = 0;     // plans the driver refused (part of)
  std::uint64_t prefetched_bytes = 0;  // asked for on the GPU ahead of use
  std::uint64_t pre_evicted_bytes = 0;
  std::uint64_t discarded_bytes = 0;
  // Prefetched blocks, judged: there before their kernel, faulted before they arrived, or evicted
  // unused.
  std::uint64_t timely = 0, late = 0, wasted = 0;
  // Fault records on blocks the last plan's window held (predicted, yet not there in time) and on
  // blocks it did not (not predicted): what is left to win by timing, and by prediction.
  std::uint64_t faults_in_window = 0, faults_outside_window = 0;
  std::uint64_t lookahead = 0;  // kernels planned ahead, at the end
  // Blocks the plans' windows held, at most, and the budget (the limit less the headroom, and less
  // evictions still running) in whole blocks at the last plan. Blocks are budgeted by the pages the
  // program touches of them, so a window can fit in fewer bytes than its blocks.
  std::uint64_t window_blocks_max = 0, budget_blocks = 0;
  std::uint64_t resets = 0;  // times the learned state outgrew its bounds and was forgotten
};

class HintPolicy {
 public:
  virtual ~HintPolicy() = default;
  // The host enqueued a kernel.
  virtual void on_launch(const KernelLaunch& launch) = 0;
  // A managed range was allocated or freed.
  virtual void on_range(const RangeEvent& event) = 0;
  // A GPU page fault on `block`, as soon as its record arrives.
  virtual void on_fault(BlockId block) = 0;
  // The GPU ran the kernel of this launch (its execution record arrived).
  virtual void on_kernel_executed(std::uint64_t correlation_id) = 0;
  // The GPU has run every launch on `stream` before the one with this correlation id (a progress
  // marker completed): sooner than the execution records say so.
  virtual void on_stream_progress(std::uint64_t stream, std::uint64_t correlation_id) = 0;
  // Later, once its faults have had time to arrive: `faulted` are the blocks of the faults
  // attributed to it, in time order.
  virtual void on_kernel_complete(std::uint64_t correlation_id, std::span<const BlockId> faulted) = 0;
  // The hints for now, given residency and the limit; no discards or evictions unless `may_evict`,
  // no prefetches unless `may_prefetch` (earlier ones still running). Ranges may overhang managed
  // memory; the pipeline clips them.
  virtual HintPlan plan(const ResidencyMap& residency, std::uint64_t resident_limit_bytes, bool may_evict,
                        bool may_prefetch) = 0;
  virtual PrefetchStats stats() const = 0;
  // Whether its plans evict to make room; if not, reactive eviction holds the limit.
  virtual bool evicts() const = 0;
};

}  // namespace deepum::core
