// PrefetchPlanner: DeepUM's prefetcher, in user space and without CUDA. It learns from launches
// (execution key, managed pointer arguments) and from the blocks each kernel touched, predicts the
// blocks the current and next N kernels will touch, and plans the hints that get them onto the GPU
// in time: discard dead memory, pre-evict blocks no predicted kernel needs, prefetch the predicted
// blocks as large contiguous ranges. Driven by one thread (the worker); the caller carries the plan
// out through its HintExecutor.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <span>
#include <unordered_set>
#include <vector>

#include "deepum/core/events.hpp"
#include "deepum/core/hint_executor.hpp"
#include "deepum/core/residency_map.hpp"
#include "deepum/prefetch/block_correlation_table.hpp"
#include "deepum/prefetch/execution_id_table.hpp"
#include "deepum/prefetch/pointer_extents.hpp"
#include "deepum/prefetch/prefetch_options.hpp"

namespace deepum::prefetch {

using core::AddressRange;

// What the planner needs to know of GPU residency (the worker's ResidencyMap behind it). The caller
// must make it reflect the plans it carries out (evicted ranges gone, prefetched ranges resident)
// before the next plan, or the next plan asks for the same blocks again.
class ResidencyView {
 public:
  virtual ~ResidencyView() = default;
  virtual bool is_resident(BlockId block) const = 0;
  virtual std::uint64_t resident_bytes() const = 0;
  virtual std::uint64_t limit_bytes() const = 0;
  // Calls visit(block) for the resident blocks, least recently used first, until it returns false.
  virtual void visit_least_recently_used(const std::function<bool(BlockId)>& visit) const = 0;
  // Bytes the block holds once resident (what the program touches of it), and holds now.
  virtual std::uint64_t footprint_bytes(BlockId) const { return core::kBlockBytes; }
  virtual std::uint64_t resident_bytes_of(BlockId block) const {
    return is_resident(block) ? core::kBlockBytes : 0;
  }
};

// Carried out in this order: discard, evict, prefetch. Ranges are 2 MB-block aligned except discard
// ranges, which are the dead ranges as given; the caller clips them to managed memory.
using Plan = core::HintPlan;

// Feedback on one prefetched block, from the integration: used after it arrived (timely), faulted
// before it arrived (late: look further ahead), or evicted before any kernel used it (wasted: look
// less far ahead).
enum class PrefetchOutcome : std::uint8_t { timely, late, wasted };

class PrefetchPlanner {
 public:
  // Outcomes are judged in windows of this many: lookahead doubles when late ones dominate and
  // halve when wasted ones do, each needing at least an eighth of the window.
  static constexpr std::size_t kOutcomeWindow = 32;
  // Launches waiting for their completion beyond this are dropped, oldest first: without kernel
  // records (paused tracing) no completion ever comes.
  static constexpr std::size_t kMaxPendingLaunches = 4096;

  explicit PrefetchPlanner(const PrefetchOptions& options = {});

  // The host enqueued a kernel: its pointer arguments are known future use (each to the extent of
  // its buffer, see PointerExtents), and its execution key extends the history the next kernels are
  // predicted from.
  void on_launch(const core::KernelLaunch& launch);
  // A managed range came or went: the bounds of its buffers' extents.
  void on_range(const core::RangeEvent& event) { extents_.on_range(event); }
  // The GPU ran the kernel of that launch: it leaves the window of kernels to come. (Its learning
  // waits for on_kernel_complete, once its faults are known.)
  void on_kernel_executed(std::uint64_t correlation_id);
  // The GPU has run every launch on `stream` before the one with this correlation id.
  void on_stream_progress(std::uint64_t stream, std::uint64_t correlation_id);
  // The kernel of that launch finished; `faulted` are the blocks of the faults attributed to it, in
  // time order. Its table learns the blocks of its pointers' extents (stable even once prefetching
  // removes the faults) followed by the faulted blocks.
  void on_kernel_complete(std::uint64_t correlation_id, std::span<const BlockId> faulted);
  // A fault the last plan did not predict: the next plan follows the running kernel's table from
  // that block as well.
  void on_fault(BlockId block);
  void on_prefetch_outcome(PrefetchOutcome outcome);

  // The hints for now. `dead` are ranges the program freed (to its allocator's cache) since the last
  // plan and will not read again before writing.
  Plan plan(const ResidencyView& residency, std::span<const AddressRange> dead);

  // The blocks the current and next lookahead() kernels are predicted to touch, nearest kernel
  // first (the order plan() draws from).
  std::vector<BlockId> predicted_blocks() const;

  std::size_t lookahead() const { return lookahead_; }
  std::size_t last_window_blocks() const { return last_window_.size(); }
  // Blocks that fit under this limit less the headroom.
  std::uint64_t budget_blocks(std::uint64_t limit_bytes) const {
    return limit_bytes > options_.headroom_bytes ? (limit_bytes - options_.headroom_bytes) / core::kBlockBytes
                                                 : 0;
  }
  // Whether the last plan's window held the block.
  bool in_last_window(BlockId block) const { return last_window_.count(block) != 0; }
  std::size_t memory_bytes() const;
  // How many times the learned state outgrew its bounds and was forgotten.
  std::size_t resets() const { return resets_; }
  const ExecutionIdTable& execution_ids() const { return execution_ids_; }

 private:
  struct PendingLaunch {
    std::uint64_t correlation_id = 0;
    std::uint64_t stream = 0;
    ExecutionId id = 0;
    std::uint16_t pointer_count = 0;
    bool executed = false;  // out of the window, waiting to be learned from
    std::array<std::uint64_t, core::KernelLaunch::kMaxPointers> pointers{};
    std::array<std::uint64_t, core::KernelLaunch::kMaxPointers> extents{};  // 0: see PointerExtents
  };
  // One execution ID's table and how far its predictions are trusted: a kernel whose touches its
  // table failed to predict twice running (random accesses) is not prefetched for until it predicts
  // well again, so irregular kernels do not flood the link.
  struct KernelModel {
    static constexpr std::uint8_t kMaxTrust = 3;
    BlockCorrelationTable table;
    std::uint8_t trust = 2;  // prefetched for while > 0
  };

  KernelModel& model(ExecutionId id);
  const KernelModel* find_model(ExecutionId id) const;
  void add_kernel_blocks(ExecutionId id, const PendingLaunch* launch, std::optional<BlockId> restart,
                         std::vector<BlockId>& window, std::unordered_set<BlockId>& seen) const;
  void forget_everything();
  // Calls add(block) for every block of the launch's pointers' extents, in pointer order.
  template <typename Fn>
  void for_each_pointer_block(const PendingLaunch& launch, Fn&& add) const;

  PrefetchOptions options_;
  ExecutionIdTable execution_ids_;
  std::vector<KernelModel> models_;  // by execution ID
  std::uint64_t table_bytes_ = 0;
  std::deque<PendingLaunch> pending_;  // launch order
  PointerExtents extents_;
  std::optional<BlockId> restart_block_;
  std::unordered_set<BlockId> last_window_;
  std::size_t lookahead_;
  std::size_t outcomes_ = 0, late_ = 0, wasted_ = 0;
  std::size_t resets_ = 0;
};

}  // namespace deepum::prefetch
