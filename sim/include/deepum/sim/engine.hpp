// The replay engine: one compute stream running the workload's kernels in order, a host thread
// issuing hint calls, and a link with one channel each way. A Policy sees every kernel before it
// runs and may issue prefetch, evict and discard hints through the Executor; whatever a kernel
// touches that is not on the GPU when it starts is a demand fault, handled on its critical path
// as plain Unified Memory would (the driver evicts a victim the policy chooses, then migrates).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <queue>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/sim/machine_model.hpp"
#include "deepum/sim/workload.hpp"

namespace deepum::sim {

using Nanoseconds = std::uint64_t;

enum class BlockState : std::uint8_t {
  unpopulated,  // holds nothing yet (or was discarded): first touch places it on the GPU, no transfer
  host,         // its data is in host memory
  gpu,          // on the GPU, or on its way there (ready_time says when it is usable)
};

struct SimStats {
  Nanoseconds total_ns = 0;
  Nanoseconds compute_ns = 0;
  Nanoseconds stall_ns = 0;  // kernels waiting for their blocks
  std::uint64_t h2d_bytes = 0;
  std::uint64_t d2h_bytes = 0;
  std::uint64_t faults = 0;            // blocks a kernel found missing (populating ones included)
  std::uint64_t populate_faults = 0;   // of those, first touches that moved nothing
  std::uint64_t driver_evictions = 0;  // blocks the driver wrote back to make room for a fault or prefetch
  std::uint64_t prefetch_calls = 0;    // hint calls, one contiguous range each
  std::uint64_t evict_calls = 0;
  std::uint64_t discard_calls = 0;
  std::uint64_t prefetched_blocks = 0;  // blocks a prefetch brought in (populating ones included)
  std::uint64_t evicted_blocks = 0;     // blocks an evict hint wrote back
  std::uint64_t discarded_blocks = 0;
  std::uint64_t released_blocks = 0;  // dropped because their range was freed
  std::uint64_t transfer_calls() const { return prefetch_calls + evict_calls + discard_calls; }
};

// Why a block left the GPU, for tests and debugging.
struct EvictionRecord {
  std::uint32_t kernel = 0;  // the kernel about to run (or running, for a demand fault)
  BlockIndex block = 0;
  enum class Cause : std::uint8_t { fault, prefetch, hint, discard } cause = Cause::fault;
  bool operator==(const EvictionRecord&) const = default;
};

// When an operation ran, or when a move over the link ran (moves back to back one way are one event).
struct TimelineEvent {
  enum class Kind : std::uint8_t { operation, to_gpu, to_host } kind = Kind::operation;
  std::uint32_t kernel = 0;  // the operation (Workload::kernels), or the one about to run when a move began
  Nanoseconds start = 0, end = 0;
  std::uint64_t bytes = 0;  // a move's
  bool operator==(const TimelineEvent&) const = default;
};

struct RunOptions {
  std::uint64_t capacity_blocks = 0;  // 0: the machine model's capacity_bytes / 2 MB
  bool record_evictions = false;
  bool record_timeline = false;  // SimResult::timeline
  // The kernel that opens the measured window (steady state after warm-up iterations):
  // SimResult::before_window holds the statistics as they stood when it was about to run.
  std::uint32_t window_start = 0;
};

class Policy;
struct SimResult;

// The simulated driver and hardware, as a policy sees it.
class Executor {
 public:
  Executor(const Workload& workload, const MachineModel& machine, std::uint64_t capacity_blocks, bool record);

  // Simulated time at which hints issued now are issued: the end of the previous kernel.
  Nanoseconds now() const { return now_; }
  std::uint32_t current_kernel() const { return current_kernel_; }
  std::uint64_t capacity_blocks() const { return capacity_; }
  std::uint64_t occupied_blocks() const { return occupied_; }
  std::uint64_t free_blocks() const { return capacity_ - occupied_; }
  BlockState state(BlockIndex block) const { return state_[block]; }
  bool on_gpu(BlockIndex block) const { return state_[block] == BlockState::gpu; }
  Nanoseconds ready_time(BlockIndex block) const { return ready_[block]; }
  // When the last kernel that touched the block ends (0: none yet).
  Nanoseconds last_use_end(BlockIndex block) const { return last_use_end_[block]; }
  const Workload& workload() const { return workload_; }
  const MachineModel& machine() const { return machine_; }

  // Hints. Each maximal run of address-adjacent blocks, in the order given, is one call costing the
  // host its call time; blocks already where the hint would put them are skipped.
  // Prefetch to the GPU: needs a free block per block brought in; when there is none the driver
  // evicts the policy's victim first (write-back at the eviction rate).
  void prefetch(std::span<const BlockIndex> blocks);
  // Write back to the host on the copy stream; the memory is free once the copy is done.
  void evict(std::span<const BlockIndex> blocks);
  // Drop without writing back: the data is gone, the next touch populates the block afresh.
  void discard(std::span<const BlockIndex> blocks);

  // Moves ordered in streams, for policies that decide on the program's thread before each launch
  // (OrderedPolicy): no host call is charged (the policy keeps the program thread's time), each
  // starts no earlier than `earliest` and, for a block leaving, than its last use; each returns
  // when it is done (`earliest` when nothing moved). Blocks not where the move starts are skipped.
  // Write back to the host at `gb_per_s` (a driver move, or a copy into a host store); `copies`:
  // deepum's copies, whose directions overlap as the machine's copies_overlap says (else as its
  // migrations_overlap).
  Nanoseconds write_back(std::span<const BlockIndex> blocks, Nanoseconds earliest, double gb_per_s,
                         bool copies = false);
  // Drop where they are: nothing is written back.
  Nanoseconds drop(std::span<const BlockIndex> blocks, Nanoseconds earliest);
  // Make resident, usable at the time returned: the host's data copied at `gb_per_s`, or nothing
  // copied when `gb_per_s` is 0 (a placement: the contents are dead or about to be overwritten).
  Nanoseconds bring_in(std::span<const BlockIndex> blocks, Nanoseconds earliest, double gb_per_s,
                       bool copies = false);
  // The current kernel may not start before `time` (its launch, or a wait its stream was given).
  void hold_kernel_until(Nanoseconds time) { kernel_not_before_ = std::max(kernel_not_before_, time); }

  // The least recently used block on the GPU that the current kernel does not touch; the default
  // victim. LRU order is by use (each kernel's touch) or, with lru_by_migration, by arrival only.
  std::optional<BlockIndex> lru_victim() const;
  void set_lru_by_migration(bool by_migration) { lru_by_migration_ = by_migration; }
  bool pinned(BlockIndex block) const { return pinned_stamp_[block] == current_kernel_ + 1; }
  // Calls visit(block) for the blocks on the GPU, least recently used first (the order lru_victim()
  // draws from), until it returns false.
  template <typename Visit>
  void visit_least_recently_used(Visit&& visit) const {
    for (BlockIndex b = lru_tail_; b != kNil; b = lru_prev_[b]) {
      if (!visit(b)) return;
    }
  }

  const SimStats& stats() const { return stats_; }
  const SimStats& before_window() const { return before_window_; }
  const std::vector<EvictionRecord>& evictions() const { return evictions_; }

 private:
  friend SimResult simulate(const Workload&, const MachineModel&, Policy&, const RunOptions&);
  static constexpr BlockIndex kNil = 0xffffffffu;

  void run(Policy& policy);
  Nanoseconds host_call(double call_us);  // returns when the call returns
  Nanoseconds take_slot();                // occupies a free block; returns when it is free
  Nanoseconds make_room(Policy& policy, Nanoseconds at, EvictionRecord::Cause cause);  // driver eviction
  // A move of `duration` one way, starting no earlier than `earliest` nor before the link is free
  // (either way, unless `overlaps`: the machine's migrations_overlap, or for deepum's copies its
  // copies_overlap); returns its end.
  Nanoseconds migrate(bool to_gpu, Nanoseconds earliest, Nanoseconds duration);
  Nanoseconds migrate(bool to_gpu, Nanoseconds earliest, Nanoseconds duration, bool overlaps);
  void occupy(BlockIndex block, Nanoseconds ready);
  void vacate(BlockIndex block, BlockState to);
  void lru_push_front(BlockIndex block);
  void lru_unlink(BlockIndex block);
  template <typename Each>
  void for_each_run(std::span<const BlockIndex> blocks, Each&& each);

  const Workload& workload_;
  MachineModel machine_;
  std::uint64_t capacity_;
  bool record_;
  bool lru_by_migration_ = false;
  Policy* policy_ = nullptr;

  std::vector<BlockState> state_;
  std::vector<Nanoseconds> ready_;
  std::vector<Nanoseconds> last_use_end_;
  std::vector<std::uint32_t> pinned_stamp_;  // kernel + 1 while that kernel is the current one
  std::vector<BlockIndex> lru_prev_, lru_next_;
  BlockIndex lru_head_ = kNil, lru_tail_ = kNil;  // head: most recent
  std::priority_queue<Nanoseconds, std::vector<Nanoseconds>, std::greater<>> free_slots_;
  std::uint64_t occupied_ = 0;
  std::uint64_t spare_slots_ = 0;  // free since the start, beyond the heap (capacity > blocks)

  Nanoseconds now_ = 0;       // compute stream: end of the last kernel
  Nanoseconds host_ = 0;      // host thread free at
  Nanoseconds h2d_free_ = 0;  // channels free at (one shared value when migrations do not overlap)
  Nanoseconds d2h_free_ = 0;
  Nanoseconds kernel_not_before_ = 0;  // hold_kernel_until, for the current kernel
  std::uint32_t current_kernel_ = 0;
  std::uint32_t window_start_ = 0;
  SimStats stats_;
  SimStats before_window_;
  std::vector<EvictionRecord> evictions_;
  bool record_timeline_ = false;
  std::vector<TimelineEvent> timeline_;
  std::size_t last_move_[2] = {SIZE_MAX, SIZE_MAX};  // the latest event of each way, to extend
  void record_move(bool to_gpu, Nanoseconds start, Nanoseconds end);
};

// A memory-management policy. It is told about each kernel before it runs (it may look at the
// kernel's launch, its blocks and, if it is an oracle, the whole workload) and after it ran.
class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // The settings and what the policy did, for the report (SimResult::detail); empty: nothing.
  virtual std::string detail() const { return {}; }
  // Once, before the first kernel.
  virtual void begin(Executor& executor) { (void)executor; }
  // Before kernel `k` runs, at executor.now(): issue hints.
  virtual void before_kernel(std::uint32_t k, Executor& executor) = 0;
  // After kernel `k` ran (executor.now() is its end).
  virtual void after_kernel(std::uint32_t k, Executor& executor) {
    (void)k;
    (void)executor;
  }
  // Kernel `k` found `block` missing (called before the fault is handled).
  virtual void on_fault(std::uint32_t k, BlockIndex block) {
    (void)k;
    (void)block;
  }
  // The GPU is full and the driver needs room: a block on the GPU that the current kernel does not
  // touch (executor.pinned() is false). The default is the executor's LRU victim.
  virtual std::optional<BlockIndex> choose_victim(const Executor& executor) { return executor.lru_victim(); }
  // A block arrived on the GPU (or started to), or left it.
  virtual void on_occupied(BlockIndex block) { (void)block; }
  virtual void on_vacated(BlockIndex block) { (void)block; }
};

struct SimResult {
  std::string policy;
  SimStats stats;
  SimStats before_window;                 // stats when RunOptions::window_start was about to run
  std::vector<EvictionRecord> evictions;  // with RunOptions::record_evictions
  std::vector<TimelineEvent> timeline;    // with RunOptions::record_timeline, in the order begun
  std::string detail;                     // the policy's settings, if it has any worth reporting
};

// What happened from `before` to `after` (counters and times subtracted).
SimStats stats_between(const SimStats& before, const SimStats& after);

// Replays the workload under the policy. Throws std::invalid_argument when a kernel touches more
// blocks than the GPU holds (no policy can run it).
SimResult simulate(const Workload& workload, const MachineModel& machine, Policy& policy,
                   const RunOptions& options = {});

}  // namespace deepum::sim
