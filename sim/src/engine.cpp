#include "deepum/sim/engine.hpp"

#include <algorithm>
#include <stdexcept>

namespace deepum::sim {

namespace {
constexpr std::uint64_t kBlock = core::kBlockBytes;
}

Executor::Executor(const Workload& workload, const MachineModel& machine, std::uint64_t capacity_blocks,
                   bool record)
    : workload_(workload),
      machine_(machine),
      capacity_(capacity_blocks),
      record_(record),
      state_(workload.block_count(), BlockState::unpopulated),
      ready_(workload.block_count(), 0),
      last_use_end_(workload.block_count(), 0),
      pinned_stamp_(workload.block_count(), 0),
      lru_prev_(workload.block_count(), kNil),
      lru_next_(workload.block_count(), kNil) {
  // Only as many free blocks as can ever be used need tracking.
  const std::uint64_t slots = std::min<std::uint64_t>(capacity_, workload.block_count());
  std::vector<Nanoseconds> zeros(slots, 0);
  free_slots_ = decltype(free_slots_)(std::greater<>(), std::move(zeros));
  capacity_ = std::max<std::uint64_t>(capacity_, 1);
  spare_slots_ = capacity_ - slots;
}

Nanoseconds Executor::host_call(double call_us) {
  host_ = std::max(host_, now_) + us_to_ns(call_us);
  return host_;
}

Nanoseconds Executor::take_slot() {
  ++occupied_;
  if (spare_slots_ > 0) {  // never used before: free from the start
    --spare_slots_;
    return 0;
  }
  const Nanoseconds at = free_slots_.top();
  free_slots_.pop();
  return at;
}

void Executor::lru_push_front(BlockIndex block) {
  lru_prev_[block] = kNil;
  lru_next_[block] = lru_head_;
  if (lru_head_ != kNil) lru_prev_[lru_head_] = block;
  lru_head_ = block;
  if (lru_tail_ == kNil) lru_tail_ = block;
}

void Executor::lru_unlink(BlockIndex block) {
  const BlockIndex prev = lru_prev_[block];
  const BlockIndex next = lru_next_[block];
  if (prev != kNil)
    lru_next_[prev] = next;
  else
    lru_head_ = next;
  if (next != kNil)
    lru_prev_[next] = prev;
  else
    lru_tail_ = prev;
  lru_prev_[block] = lru_next_[block] = kNil;
}

std::optional<BlockIndex> Executor::lru_victim() const {
  for (BlockIndex b = lru_tail_; b != kNil; b = lru_prev_[b]) {
    if (!pinned(b)) return b;
  }
  return std::nullopt;
}

void Executor::occupy(BlockIndex block, Nanoseconds ready) {
  state_[block] = BlockState::gpu;
  ready_[block] = ready;
  lru_push_front(block);
  policy_->on_occupied(block);
}

void Executor::vacate(BlockIndex block, BlockState to) {
  policy_->on_vacated(block);
  state_[block] = to;
  lru_unlink(block);
  --occupied_;
}

Nanoseconds Executor::make_room(Policy& policy, Nanoseconds at, EvictionRecord::Cause cause) {
  std::optional<BlockIndex> victim = policy.choose_victim(*this);
  if (!victim || *victim >= state_.size() || !on_gpu(*victim) || pinned(*victim)) victim = lru_victim();
  if (!victim) throw std::logic_error("deepum-sim: the GPU is full of blocks the current kernel needs");
  const BlockIndex v = *victim;
  const Nanoseconds end = migrate(false, std::max({at, ready_[v], last_use_end_[v]}),
                                  transfer_ns(kBlock, machine_.evict_d2h_gb_per_s));
  stats_.d2h_bytes += kBlock;
  ++stats_.driver_evictions;
  if (record_) evictions_.push_back(EvictionRecord{current_kernel_, v, cause});
  vacate(v, BlockState::host);
  free_slots_.push(end);
  return end;
}

Nanoseconds Executor::migrate(bool to_gpu, Nanoseconds earliest, Nanoseconds duration) {
  return migrate(to_gpu, earliest, duration, machine_.migrations_overlap);
}

Nanoseconds Executor::migrate(bool to_gpu, Nanoseconds earliest, Nanoseconds duration, bool overlaps) {
  Nanoseconds& channel = to_gpu ? h2d_free_ : d2h_free_;
  const Nanoseconds start = std::max(earliest, overlaps ? channel : std::max(h2d_free_, d2h_free_));
  const Nanoseconds end = start + duration;
  channel = end;
  if (!overlaps) h2d_free_ = d2h_free_ = end;
  if (record_timeline_) record_move(to_gpu, start, end);
  return end;
}

void Executor::record_move(bool to_gpu, Nanoseconds start, Nanoseconds end) {
  // Every move is one block; one that starts as the last one its way ended extends it.
  std::size_t& last = last_move_[to_gpu ? 1 : 0];
  if (last != SIZE_MAX && timeline_[last].end == start) {
    timeline_[last].end = end;
    timeline_[last].bytes += kBlock;
    return;
  }
  last = timeline_.size();
  timeline_.push_back({to_gpu ? TimelineEvent::Kind::to_gpu : TimelineEvent::Kind::to_host, current_kernel_,
                       start, end, kBlock});
}

template <typename Each>
void Executor::for_each_run(std::span<const BlockIndex> blocks, Each&& each) {
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= blocks.size(); ++i) {
    if (i == blocks.size() || workload_.block_ids[blocks[i]] != workload_.block_ids[blocks[i - 1]] + 1) {
      if (i > begin) each(blocks.subspan(begin, i - begin));
      begin = i;
    }
  }
}

void Executor::prefetch(std::span<const BlockIndex> blocks) {
  std::vector<BlockIndex> wanted;
  for (BlockIndex b : blocks) {
    if (b < state_.size() && !on_gpu(b) && (wanted.empty() || wanted.back() != b)) wanted.push_back(b);
  }
  for_each_run(wanted, [this](std::span<const BlockIndex> run) {
    const Nanoseconds issued = host_call(machine_.prefetch_h2d_call_us);
    ++stats_.prefetch_calls;
    for (BlockIndex b : run) {
      if (on_gpu(b)) continue;  // a repeated block
      if (free_blocks() == 0) make_room(*policy_, issued, EvictionRecord::Cause::prefetch);
      const Nanoseconds slot = take_slot();
      Nanoseconds ready = std::max(issued, slot);
      if (state_[b] == BlockState::host) {
        ready = migrate(true, ready, transfer_ns(kBlock, machine_.prefetch_h2d_gb_per_s));
        stats_.h2d_bytes += kBlock;
      }
      ++stats_.prefetched_blocks;
      occupy(b, ready);
    }
  });
}

void Executor::evict(std::span<const BlockIndex> blocks) {
  std::vector<BlockIndex> wanted;
  for (BlockIndex b : blocks) {
    if (b < state_.size() && on_gpu(b) && !pinned(b) && (wanted.empty() || wanted.back() != b))
      wanted.push_back(b);
  }
  for_each_run(wanted, [this](std::span<const BlockIndex> run) {
    const Nanoseconds issued = host_call(machine_.prefetch_d2h_call_us);
    ++stats_.evict_calls;
    for (BlockIndex b : run) {
      if (!on_gpu(b)) continue;
      const Nanoseconds end = migrate(false, std::max({issued, ready_[b], last_use_end_[b]}),
                                      transfer_ns(kBlock, machine_.prefetch_d2h_gb_per_s));
      stats_.d2h_bytes += kBlock;
      ++stats_.evicted_blocks;
      if (record_) evictions_.push_back(EvictionRecord{current_kernel_, b, EvictionRecord::Cause::hint});
      vacate(b, BlockState::host);
      free_slots_.push(end);
    }
  });
}

void Executor::discard(std::span<const BlockIndex> blocks) {
  std::vector<BlockIndex> wanted;
  for (BlockIndex b : blocks) {
    if (b < state_.size() && state_[b] != BlockState::unpopulated && !pinned(b) &&
        (wanted.empty() || wanted.back() != b)) {
      wanted.push_back(b);
    }
  }
  for_each_run(wanted, [this](std::span<const BlockIndex> run) {
    const Nanoseconds issued = host_call(machine_.discard_call_us);
    host_ += transfer_ns(run.size() * kBlock, machine_.discard_gb_per_s);
    const Nanoseconds done = std::max(issued, host_);
    ++stats_.discard_calls;
    for (BlockIndex b : run) {
      ++stats_.discarded_blocks;
      if (state_[b] == BlockState::gpu) {
        if (record_) evictions_.push_back(EvictionRecord{current_kernel_, b, EvictionRecord::Cause::discard});
        const Nanoseconds at = std::max({done, ready_[b], last_use_end_[b]});
        vacate(b, BlockState::unpopulated);
        free_slots_.push(at);
      } else {
        state_[b] = BlockState::unpopulated;
      }
    }
  });
}

Nanoseconds Executor::write_back(std::span<const BlockIndex> blocks, Nanoseconds earliest, double gb_per_s,
                                 bool copies) {
  const bool overlaps = copies ? machine_.copies_overlap : machine_.migrations_overlap;
  Nanoseconds done = earliest;
  for (BlockIndex b : blocks) {
    if (b >= state_.size() || !on_gpu(b) || pinned(b)) continue;
    const Nanoseconds end = migrate(false, std::max({earliest, ready_[b], last_use_end_[b]}),
                                    transfer_ns(kBlock, gb_per_s), overlaps);
    stats_.d2h_bytes += kBlock;
    ++stats_.evicted_blocks;
    if (record_) evictions_.push_back(EvictionRecord{current_kernel_, b, EvictionRecord::Cause::hint});
    vacate(b, BlockState::host);
    free_slots_.push(end);
    done = std::max(done, end);
  }
  return done;
}

Nanoseconds Executor::drop(std::span<const BlockIndex> blocks, Nanoseconds earliest) {
  Nanoseconds done = earliest;
  for (BlockIndex b : blocks) {
    if (b >= state_.size() || state_[b] == BlockState::unpopulated || pinned(b)) continue;
    ++stats_.discarded_blocks;
    if (state_[b] != BlockState::gpu) {
      state_[b] = BlockState::unpopulated;
      continue;
    }
    const Nanoseconds at = std::max({earliest, ready_[b], last_use_end_[b]});
    if (record_) evictions_.push_back(EvictionRecord{current_kernel_, b, EvictionRecord::Cause::discard});
    vacate(b, BlockState::unpopulated);
    free_slots_.push(at);
    done = std::max(done, at);
  }
  return done;
}

Nanoseconds Executor::bring_in(std::span<const BlockIndex> blocks, Nanoseconds earliest, double gb_per_s,
                               bool copies) {
  const bool overlaps = copies ? machine_.copies_overlap : machine_.migrations_overlap;
  Nanoseconds done = earliest;
  for (BlockIndex b : blocks) {
    if (b >= state_.size() || on_gpu(b)) continue;
    if (free_blocks() == 0) make_room(*policy_, earliest, EvictionRecord::Cause::prefetch);
    Nanoseconds ready = std::max(earliest, take_slot());
    if (gb_per_s > 0 && state_[b] == BlockState::host) {
      ready = migrate(true, ready, transfer_ns(kBlock, gb_per_s), overlaps);
      stats_.h2d_bytes += kBlock;
    }
    ++stats_.prefetched_blocks;
    occupy(b, ready);
    done = std::max(done, ready);
  }
  return done;
}

void Executor::run(Policy& policy) {
  policy_ = &policy;
  policy.begin(*this);
  const auto& kernels = workload_.kernels;
  std::size_t next_release = 0;
  for (std::uint32_t k = 0; k < kernels.size(); ++k) {
    current_kernel_ = k;
    if (k == window_start_) {
      before_window_ = stats_;
      before_window_.total_ns = now_;
    }
    for (; next_release < workload_.releases.size() && workload_.releases[next_release].before_kernel <= k;
         ++next_release) {
      const BlockRelease& release = workload_.releases[next_release];
      for (BlockIndex b = release.first; b < release.first + release.count; ++b) {
        if (state_[b] == BlockState::gpu) {
          const Nanoseconds at = std::max(now_, ready_[b]);
          vacate(b, BlockState::unpopulated);
          free_slots_.push(at);
          ++stats_.released_blocks;
        } else {
          state_[b] = BlockState::unpopulated;
        }
      }
    }

    const std::span<const BlockIndex> blocks = workload_.blocks_of(k);
    for (BlockIndex b : blocks) pinned_stamp_[b] = k + 1;
    kernel_not_before_ = 0;
    policy.before_kernel(k, *this);
    if (!lru_by_migration_) {
      for (BlockIndex b : blocks) {
        if (on_gpu(b)) {
          lru_unlink(b);
          lru_push_front(b);
        }
      }
    }

    // The kernel's own faults, one after the other, once it may start.
    Nanoseconds t = std::max(now_, kernel_not_before_);
    Nanoseconds ready = t;
    for (BlockIndex b : blocks) {
      if (on_gpu(b)) {
        ready = std::max(ready, ready_[b]);
        continue;
      }
      policy.on_fault(k, b);
      ++stats_.faults;
      if (free_blocks() == 0) make_room(policy, t, EvictionRecord::Cause::fault);
      t = std::max(t, take_slot());
      if (state_[b] == BlockState::unpopulated) {
        t += us_to_ns(machine_.fault_us);
        ++stats_.populate_faults;
      } else {
        t = migrate(true, t, transfer_ns(kBlock, machine_.fault_h2d_gb_per_s));
        stats_.h2d_bytes += kBlock;
      }
      occupy(b, t);
    }
    const Nanoseconds start = std::max({t, ready, kernel_not_before_});
    const Nanoseconds end = start + kernels[k].compute_ns;
    stats_.stall_ns += start - now_;
    stats_.compute_ns += kernels[k].compute_ns;
    for (BlockIndex b : blocks) last_use_end_[b] = end;
    now_ = end;
    if (record_timeline_) timeline_.push_back({TimelineEvent::Kind::operation, k, start, end, 0});
    policy.after_kernel(k, *this);
  }
  stats_.total_ns = now_;
}

SimStats stats_between(const SimStats& before, const SimStats& after) {
  SimStats d;
  d.total_ns = after.total_ns - before.total_ns;
  d.compute_ns = after.compute_ns - before.compute_ns;
  d.stall_ns = after.stall_ns - before.stall_ns;
  d.h2d_bytes = after.h2d_bytes - before.h2d_bytes;
  d.d2h_bytes = after.d2h_bytes - before.d2h_bytes;
  d.faults = after.faults - before.faults;
  d.populate_faults = after.populate_faults - before.populate_faults;
  d.driver_evictions = after.driver_evictions - before.driver_evictions;
  d.prefetch_calls = after.prefetch_calls - before.prefetch_calls;
  d.evict_calls = after.evict_calls - before.evict_calls;
  d.discard_calls = after.discard_calls - before.discard_calls;
  d.prefetched_blocks = after.prefetched_blocks - before.prefetched_blocks;
  d.evicted_blocks = after.evicted_blocks - before.evicted_blocks;
  d.discarded_blocks = after.discarded_blocks - before.discarded_blocks;
  d.released_blocks = after.released_blocks - before.released_blocks;
  return d;
}

SimResult simulate(const Workload& workload, const MachineModel& machine, Policy& policy,
                   const RunOptions& options) {
  const std::uint64_t capacity =
      options.capacity_blocks != 0 ? options.capacity_blocks : machine.capacity_bytes / core::kBlockBytes;
  if (capacity == 0)
    throw std::invalid_argument("the GPU holds no 2 MB block: capacity_bytes is below 2 MiB");
  const std::uint32_t most = workload.max_blocks_per_kernel();
  if (most > capacity) {
    throw std::invalid_argument("a kernel touches " + std::to_string(most) + " blocks of 2 MB (" +
                                std::to_string(most * 2) + " MiB) but the GPU holds " +
                                std::to_string(capacity) +
                                ": no policy can run it; give the GPU more memory");
  }
  Executor executor(workload, machine, capacity, options.record_evictions);
  executor.window_start_ = options.window_start;
  executor.record_timeline_ = options.record_timeline;
  executor.run(policy);
  SimResult result;
  result.policy = std::string(policy.name());
  result.stats = executor.stats();
  result.before_window = executor.before_window();
  result.evictions = executor.evictions();
  result.timeline = std::move(executor.timeline_);
  result.detail = policy.detail();
  return result;
}

}  // namespace deepum::sim
