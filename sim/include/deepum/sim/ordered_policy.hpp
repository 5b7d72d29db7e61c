// The library's launch-ordered residency in the simulator: core::LaunchOrderedResidency, the code
// the library runs, decides before each launch (from the launch's operands and the allocator's
// buffers, as the trace recorded them) what to evict, swap to deepum's host store, discard, place
// and fetch; the moves are timed as deepum's StreamOrderedEvictor issues them:
//   - on the program's thread, which pays each call's host time and, for a placement (and, where
//     the machine says so, a swap) the whole move, waits where the machine says so until a swap
//     whose room it needs is issued (after its copies out), and launches each operation after its
//     moves;
//   - an eviction (swap copies, the swap's drop, then the driver's moves) on the eviction stream,
//     after the victims' last use and the eviction thread's previous swap; the launch waits for it
//     only when the model says so;
//   - a placement and the copies back from the store after the launch stream's earlier work and
//     the evictions that make its room; a fetch after those evictions. The launch waits for both.
// Needs a trace of format 1.4 (LaunchOperands, CopyLaunch, BufferEvent records).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/core/launch_ordered_residency.hpp"
#include "deepum/sim/engine.hpp"
#include "deepum/sim/volume_bound.hpp"

namespace deepum::sim {

struct OrderedPolicyOptions {
  // What the model decides beyond evictions (the library's stream_ordered_* keys). With swap and
  // swap_bytes 0 the store holds the whole footprint.
  core::LaunchOrderedOptions moves;
  // The resident limit the model holds; 0: the simulated GPU's capacity. Below the capacity it
  // replays a run with the library's resident_limit on a larger GPU.
  std::uint64_t limit_bytes = 0;
  // Victims by the trace's true next use (BlockTimes::next_use: its next naming, or its death,
  // where its room comes back without a copy) in place of the learned loop's prediction: what a
  // perfect predictor would give the same engine.
  bool true_next_use = false;
};

class OrderedPolicy final : public Policy {
 public:
  explicit OrderedPolicy(OrderedPolicyOptions options = {}) : options_(options) {}
  // "deepum-swap" with swapping, else "deepum-place" with placing, else "deepum-ordered" (the
  // detail says which moves were on).
  std::string_view name() const override {
    if (options_.true_next_use) {
      return options_.moves.swap          ? "deepum-swap-oracle"
             : options_.moves.place_fresh ? "deepum-place-oracle"
                                          : "deepum-ordered-oracle";
    }
    const bool lru = !options_.moves.victims_by_next_use;
    if (!lru && !options_.moves.restore_ahead && options_.moves.swap) return "deepum-swap-now";
    return options_.moves.swap          ? (lru ? "deepum-swap-lru" : "deepum-swap")
           : options_.moves.place_fresh ? (lru ? "deepum-place-lru" : "deepum-place")
                                        : (lru ? "deepum-ordered-lru" : "deepum-ordered");
  }
  void begin(Executor& executor) override;
  void before_kernel(std::uint32_t k, Executor& executor) override;
  // A copy to the host is one the program reads (a loss, a metric): its thread waits for it, so
  // it issues nothing more until then (a training step's end).
  void after_kernel(std::uint32_t k, Executor& executor) override;

  // The model's counts after the run (evictions, swapped, placed bytes, ...).
  const core::LaunchOrderedStats& model_stats() const { return model_->stats(); }
  // The settings and what the model did, one line.
  std::string detail() const override;

 private:
  // The workload's blocks that `ranges` touch, in address order.
  std::span<const BlockIndex> blocks_of(const std::vector<core::AddressRange>& ranges);
  // The decision for operation k, or nullopt when the trace has none for it.
  std::optional<core::LaunchEviction> decide(std::uint32_t k, const Workload& w);
  // The evictions alongside the program that have ended by the host's time, told to the model (as
  // the library does before each decision).
  void note_ended_evictions();
  // Carries the decision out; returns when the operation may start on the GPU.
  Nanoseconds carry_out(core::LaunchEviction& d, Executor& executor);
  // A discard or placement of `duration` on the discard stream (serial: discards, placements and
  // the copies back), from `earliest` on; returns its end, and holds the program's thread for it
  // when the stream has nothing to wait for.
  // A drop or placement on one of deepum's streams (`free`: when it has run what it was given),
  // issued by the program's thread, which the driver holds for it when the stream is idle.
  Nanoseconds occupy_stream(const MachineModel& m, Nanoseconds earliest, Nanoseconds duration,
                            Nanoseconds& free);
  // When a discard's blocks' last users, up to the model's operation `last_user`, are shown done:
  // the library waits for the first progress marker after it (one every kMarkerInterval
  // operations, recorded before the operation it falls on), else the stream's work so far.
  Nanoseconds users_done(std::uint64_t last_user, Nanoseconds stream_so_far) const;
  static constexpr std::uint64_t kMarkerInterval = 16;  // as the library's (StreamOrderedEvictor)
  static constexpr std::uint32_t kNoKernel = UINT32_MAX;
  static Nanoseconds done_by(const std::vector<Nanoseconds>& done, std::uint64_t number);
  // The program's thread waits until evictions `numbers` are issued, where the machine says so.
  void wait_issued(const MachineModel& m, std::initializer_list<std::uint64_t> numbers);
  static void set_done(std::vector<Nanoseconds>& done, std::uint64_t number, Nanoseconds at);
  void set_placed(std::uint64_t number, Nanoseconds at);
  // With true_next_use: the model's next use of the block holding `address`, as operation `now`
  // (the model's number for the operation being decided, deciding_) sees it.
  std::uint64_t true_next_use(std::uint64_t address, std::uint64_t now) const;

  OrderedPolicyOptions options_;
  std::optional<core::LaunchOrderedResidency> model_;
  const Workload* workload_ = nullptr;
  std::uint64_t limit_bytes_ = 0;
  std::size_t next_event_ = 0;
  Nanoseconds host_ = 0;                    // the program's thread
  Nanoseconds discard_stream_free_ = 0;     // the discard stream has run everything issued to it
  Nanoseconds drop_stream_free_ = 0;        // ... the drop stream (discards)
  Nanoseconds restore_stream_free_ = 0;     // ... the restore stream (copies back ahead)
  Nanoseconds eviction_thread_free_ = 0;    // the eviction thread has dropped every swap so far
  Nanoseconds thread_in_calls_ns_ = 0;      // the program's thread held in placements and drops
  std::vector<Nanoseconds> eviction_done_;  // by eviction_number
  // ... and when the eviction thread issued a swap (MachineModel::swap_room_waits_for_copies).
  std::vector<Nanoseconds> eviction_issued_;
  // By placement_number: when it and every placement numbered before it are done (set_placed).
  std::vector<Nanoseconds> placement_done_;
  std::vector<BlockIndex> blocks_;
  BlockTimes times_;            // with true_next_use
  std::uint32_t deciding_ = 0;  // the operation being decided
  std::vector<std::uint64_t> pointers_, extents_;
  std::vector<std::uint32_t> operation_kernel_;  // by the model's operation number: the trace's kernel
  std::vector<Nanoseconds> kernel_end_;          // by the trace's kernel
};

}  // namespace deepum::sim
