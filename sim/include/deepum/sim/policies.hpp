// The built-in policies: plain Unified Memory, eviction driven by the records alone, and the oracle
// that gives the floor. The library's engine (ordered_policy.hpp) plugs in through the same
// Policy interface.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "deepum/sim/engine.hpp"

namespace deepum::sim {

// Plain UM: no hints. Every missing block is a demand fault; when the GPU is full the driver
// writes back the least recently used block first, on the faulting kernel's critical path.
class ReactivePolicy final : public Policy {
 public:
  // by_migration: LRU order is the order blocks arrived on the GPU (what the driver tracks),
  // rather than the order kernels last used them.
  explicit ReactivePolicy(bool lru_by_migration = false) : by_migration_(lru_by_migration) {}
  std::string_view name() const override { return by_migration_ ? "reactive-migration" : "reactive"; }
  void begin(Executor& executor) override { executor.set_lru_by_migration(by_migration_); }
  void before_kernel(std::uint32_t, Executor&) override {}

 private:
  bool by_migration_;
};

// Eviction driven by the records alone, as when a limit is held without ordering moves before
// launches, for comparison with the engine (it overshoots the limit): no driver eviction
// while there is room; after each kernel (when its faults have been seen), if the GPU holds more
// than its capacity less a headroom, the least recently used blocks are evicted with hint calls
// (cudaMemPrefetchAsync to the host: one call per run of adjacent blocks, written back at the
// prefetch D2H rate) down to a full headroom below that, so eviction runs in batches off the fault
// path. The headroom is the library's: a tenth of the capacity, at least 1 GiB, at most a quarter.
// When a kernel's faults fill the GPU before the batch is issued, the driver evicts LRU victims.
class BatchedReactivePolicy final : public Policy {
 public:
  std::string_view name() const override { return "deepum-reactive"; }
  void before_kernel(std::uint32_t, Executor&) override {}
  void after_kernel(std::uint32_t k, Executor& executor) override;

 private:
  std::vector<BlockIndex> victims_;
};

// Knows the whole workload. Belady eviction (the block whose next use is farthest goes first) and
// perfect prefetch: walking the future kernels' blocks in the order they will be needed, it brings
// each one in as early as a free block allows, evicting ahead of time only blocks needed later than
// the one it brings in. Evictions and prefetches are coalesced into calls of adjacent blocks, per
// kernel. Memory that holds nothing yet is not prefetched (nothing to move): its first touch is a
// populate fault, for which the oracle keeps a block free.
//
// The walk stays at most `window_blocks` blocks ahead of the running kernel. Without a bound it
// degenerates on cyclic access (training loops): it evicts each block right after its use to make
// room far ahead, so every block moves every iteration, where Belady keeps most of memory in place.
// simulate_oracle() tries several windows and keeps the fastest.
class OraclePolicy final : public Policy {
 public:
  static constexpr std::uint64_t kUnbounded = ~std::uint64_t{0};
  explicit OraclePolicy(std::uint64_t window_blocks = kUnbounded) : window_(window_blocks) {}
  std::string_view name() const override { return "oracle"; }
  std::uint64_t window_blocks() const { return window_; }
  void begin(Executor& executor) override;
  void before_kernel(std::uint32_t k, Executor& executor) override;
  void after_kernel(std::uint32_t k, Executor& executor) override;
  std::optional<BlockIndex> choose_victim(const Executor& executor) override;
  void on_occupied(BlockIndex block) override;
  void on_vacated(BlockIndex block) override;

  // The next kernel at or after the current one that touches `block`; kernel count if none.
  std::uint32_t next_use(BlockIndex block) const {
    return cursor_[block] < occ_offsets_[block + 1] ? occ_[cursor_[block]] : never_;
  }

 private:
  static constexpr BlockIndex kNil = 0xffffffffu;
  // Buckets of blocks on the GPU by next use, with a bit per non-empty bucket (two levels of
  // 64-bit words above the bits) to find the farthest quickly.
  void bucket_insert(BlockIndex block);
  void bucket_erase(BlockIndex block);
  void mark(std::uint32_t bucket, bool nonempty);
  std::uint32_t last_nonempty_at_or_below(std::uint32_t bucket) const;  // never_ + 1 if none

  const Workload* workload_ = nullptr;
  std::uint32_t never_ = 0;
  std::vector<std::uint32_t> occ_offsets_;  // per block, its kernels in order
  std::vector<std::uint32_t> occ_;
  std::vector<std::uint32_t> cursor_;
  std::vector<std::uint32_t> bucket_of_;
  std::vector<BlockIndex> head_, prev_, next_;
  std::vector<std::uint64_t> bits0_, bits1_, bits2_;
  std::vector<std::uint8_t> reserved_;  // a free block is kept for its populate fault
  std::uint64_t reserved_count_ = 0;
  std::uint64_t window_;
  std::uint64_t ahead_ = 0;               // blocks brought in (or kept free) for kernels not yet run
  std::vector<std::uint32_t> ahead_for_;  // per kernel, its share of ahead_
  std::uint32_t scan_kernel_ = 0;         // how far the prefetch walk has got
  std::uint32_t scan_position_ = 0;
  std::vector<BlockIndex> victims_, fetches_;
};

// "reactive", "reactive-migration" (LRU by arrival), "deepum-reactive" (BatchedReactivePolicy),
// the library's launch-ordered residency (OrderedPolicy, ordered_policy.hpp): "deepum-ordered"
// (evictions before launches, mode evict), "deepum-place" (with prefetch, discard and place_fresh)
// and "deepum-swap" (and swaps, mode fast), or "oracle" (unbounded window); nullptr for another
// name. `resident_limit_bytes` (0: the GPU's capacity) is the limit the ordered ones hold.
std::unique_ptr<Policy> make_policy(std::string_view name);
std::unique_ptr<Policy> make_policy(std::string_view name, std::uint64_t resident_limit_bytes);

// The oracle's windows simulate_oracle() tries: 4, 16, 64, 256, 1024 blocks and unbounded (those
// below the GPU's capacity).
std::vector<std::uint64_t> oracle_windows(std::uint64_t capacity_blocks);
// Runs the oracle with each window and returns the fastest (the smaller window on a tie), its
// window in SimResult::detail.
SimResult simulate_oracle(const Workload& workload, const MachineModel& machine,
                          const RunOptions& options = {});
std::vector<std::string> policy_names();

}  // namespace deepum::sim
