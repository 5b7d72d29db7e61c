#include "deepum/sim/policies.hpp"

#include <algorithm>
#include <bit>

#include "deepum/core/event_pipeline.hpp"
#include "deepum/sim/ordered_policy.hpp"

namespace deepum::sim {

void BatchedReactivePolicy::after_kernel(std::uint32_t k, Executor& executor) {
  (void)k;
  // Eviction from the records with the default headroom, a batch below it (widening the headroom
  // after an overshoot is not modelled: replayed records are never late).
  const std::uint64_t capacity = executor.capacity_blocks();
  core::PipelineOptions options;
  options.resident_limit_bytes = capacity * core::kBlockBytes;
  const std::uint64_t headroom = options.effective_headroom() / core::kBlockBytes;
  const std::uint64_t trigger = capacity - headroom;
  if (executor.occupied_blocks() <= trigger) return;
  const std::uint64_t target = trigger > headroom ? trigger - headroom : 0;
  const std::uint64_t excess = executor.occupied_blocks() - target;
  victims_.clear();
  executor.visit_least_recently_used([&](BlockIndex b) {
    if (!executor.pinned(b)) victims_.push_back(b);
    return victims_.size() < excess;
  });
  std::sort(victims_.begin(), victims_.end());  // adjacent blocks in one call, as the library's ranges
  executor.evict(victims_);
}

void OraclePolicy::begin(Executor& executor) {
  workload_ = &executor.workload();
  const Workload& w = *workload_;
  const std::uint32_t blocks = w.block_count();
  never_ = static_cast<std::uint32_t>(w.kernels.size());
  occ_offsets_.assign(std::size_t{blocks} + 1, 0);
  for (std::size_t k = 0; k < w.kernels.size(); ++k) {
    for (BlockIndex b : w.blocks_of(k)) ++occ_offsets_[b + 1];
  }
  for (std::uint32_t b = 0; b < blocks; ++b) occ_offsets_[b + 1] += occ_offsets_[b];
  occ_.assign(occ_offsets_.back(), 0);
  cursor_.assign(occ_offsets_.begin(), occ_offsets_.end() - 1);
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    for (BlockIndex b : w.blocks_of(k)) occ_[cursor_[b]++] = k;
  }
  cursor_.assign(occ_offsets_.begin(), occ_offsets_.end() - 1);

  const std::size_t buckets = std::size_t{never_} + 1;
  bucket_of_.assign(blocks, 0);
  head_.assign(buckets, kNil);
  prev_.assign(blocks, kNil);
  next_.assign(blocks, kNil);
  bits0_.assign((buckets + 63) / 64, 0);
  bits1_.assign((bits0_.size() + 63) / 64, 0);
  bits2_.assign((bits1_.size() + 63) / 64, 0);
  reserved_.assign(blocks, 0);
  reserved_count_ = 0;
  ahead_ = 0;
  ahead_for_.assign(w.kernels.size(), 0);
  scan_kernel_ = 0;
  scan_position_ = 0;
}

void OraclePolicy::mark(std::uint32_t bucket, bool nonempty) {
  const auto set = [nonempty](std::vector<std::uint64_t>& words, std::size_t index) {
    const std::uint64_t bit = std::uint64_t{1} << (index % 64);
    const bool was_empty = words[index / 64] == 0;
    if (nonempty)
      words[index / 64] |= bit;
    else
      words[index / 64] &= ~bit;
    return nonempty ? was_empty : words[index / 64] == 0;  // the word's own bit above changes
  };
  if (set(bits0_, bucket) && set(bits1_, bucket / 64)) set(bits2_, bucket / 4096);
}

std::uint32_t OraclePolicy::last_nonempty_at_or_below(std::uint32_t bucket) const {
  // Highest set bit <= index in one word, or -1.
  const auto below = [](std::uint64_t word, std::size_t bit) -> int {
    const std::uint64_t masked = bit >= 63 ? word : word & ((std::uint64_t{2} << bit) - 1);
    return masked == 0 ? -1 : 63 - std::countl_zero(masked);
  };
  const std::uint32_t none = never_ + 1;
  std::size_t i0 = bucket;
  if (int b = below(bits0_[i0 / 64], i0 % 64); b >= 0) {
    return static_cast<std::uint32_t>(i0 / 64 * 64 + static_cast<std::size_t>(b));
  }
  if (i0 / 64 == 0) return none;
  std::size_t i1 = i0 / 64 - 1;  // words of bits0 strictly below
  int b1 = below(bits1_[i1 / 64], i1 % 64);
  if (b1 < 0) {
    if (i1 / 64 == 0) return none;
    const std::size_t i2 = i1 / 64 - 1;
    const int b2 = below(bits2_[i2 / 64], i2 % 64);
    if (b2 < 0) {
      // More than 2^18 buckets below: scan the top level down (rare; bits2 is tiny).
      std::size_t w = i2 / 64;
      int found = -1;
      while (w > 0 && found < 0) {
        --w;
        found = bits2_[w] == 0 ? -1 : 63 - std::countl_zero(bits2_[w]);
      }
      if (found < 0) return none;
      i1 = (w * 64 + static_cast<std::size_t>(found)) * 64;
      b1 = 63 - std::countl_zero(bits1_[i1 / 64]);
    } else {
      const std::size_t word1 = i2 / 64 * 64 + static_cast<std::size_t>(b2);
      b1 = 63 - std::countl_zero(bits1_[word1]);
      i1 = word1 * 64;
    }
  }
  const std::size_t word0 = i1 / 64 * 64 + static_cast<std::size_t>(b1);
  const int b0 = 63 - std::countl_zero(bits0_[word0]);
  return static_cast<std::uint32_t>(word0 * 64 + static_cast<std::size_t>(b0));
}

void OraclePolicy::bucket_insert(BlockIndex block) {
  const std::uint32_t bucket = next_use(block);
  bucket_of_[block] = bucket;
  prev_[block] = kNil;
  next_[block] = head_[bucket];
  if (head_[bucket] != kNil)
    prev_[head_[bucket]] = block;
  else
    mark(bucket, true);
  head_[bucket] = block;
}

void OraclePolicy::bucket_erase(BlockIndex block) {
  const std::uint32_t bucket = bucket_of_[block];
  if (prev_[block] != kNil)
    next_[prev_[block]] = next_[block];
  else
    head_[bucket] = next_[block];
  if (next_[block] != kNil) prev_[next_[block]] = prev_[block];
  if (head_[bucket] == kNil) mark(bucket, false);
  prev_[block] = next_[block] = kNil;
}

void OraclePolicy::on_occupied(BlockIndex block) {
  bucket_insert(block);
  if (reserved_[block] != 0) {
    reserved_[block] = 0;
    --reserved_count_;
  }
}

void OraclePolicy::on_vacated(BlockIndex block) { bucket_erase(block); }

void OraclePolicy::after_kernel(std::uint32_t k, Executor& executor) {
  ahead_ -= ahead_for_[k];
  ahead_for_[k] = 0;
  for (BlockIndex b : workload_->blocks_of(k)) {
    const bool resident = executor.on_gpu(b);
    if (resident) bucket_erase(b);
    ++cursor_[b];
    if (resident) bucket_insert(b);
  }
}

std::optional<BlockIndex> OraclePolicy::choose_victim(const Executor& executor) {
  for (std::uint32_t bucket = last_nonempty_at_or_below(never_); bucket <= never_;) {
    for (BlockIndex b = head_[bucket]; b != kNil; b = next_[b]) {
      if (!executor.pinned(b)) return b;
    }
    if (bucket == 0) break;
    bucket = last_nonempty_at_or_below(bucket - 1);
  }
  return std::nullopt;
}

void OraclePolicy::before_kernel(std::uint32_t k, Executor& executor) {
  const Workload& w = *workload_;
  if (scan_kernel_ < k) {  // the walk fell behind: those kernels met their blocks by faults
    scan_kernel_ = k;
    scan_position_ = 0;
  }
  while (scan_kernel_ < w.kernels.size() && (ahead_ < window_ || scan_kernel_ == k)) {
    const std::uint32_t j = scan_kernel_;
    const std::span<const BlockIndex> blocks = w.blocks_of(j);
    std::uint64_t free_blocks = executor.free_blocks() - std::min(executor.free_blocks(), reserved_count_);
    victims_.clear();
    fetches_.clear();
    // Victims: farthest next use first, only those needed after kernel j.
    std::uint32_t bucket = last_nonempty_at_or_below(never_);
    BlockIndex candidate = bucket <= never_ ? head_[bucket] : kNil;
    bool stuck = false;
    std::uint32_t position = scan_position_;
    for (; position < blocks.size(); ++position) {
      const BlockIndex b = blocks[position];
      if (executor.on_gpu(b) || reserved_[b] != 0) continue;
      if (ahead_ >= window_ && j > k) {
        stuck = true;
        break;
      }
      if (free_blocks > 0) {
        --free_blocks;
      } else {
        while (candidate == kNil && bucket <= never_ && bucket > j) {
          bucket = bucket == 0 ? never_ + 1 : last_nonempty_at_or_below(bucket - 1);
          candidate = bucket <= never_ ? head_[bucket] : kNil;
        }
        if (candidate == kNil || bucket <= j) {
          stuck = true;
          break;
        }
        victims_.push_back(candidate);
        candidate = next_[candidate];
      }
      ++ahead_;
      ++ahead_for_[j];
      if (executor.state(b) == BlockState::host) {
        fetches_.push_back(b);
      } else {
        reserved_[b] = 1;  // populated by its fault, into a block kept free
        ++reserved_count_;
      }
    }
    std::sort(victims_.begin(), victims_.end());
    executor.evict(victims_);
    executor.prefetch(fetches_);
    if (stuck) {
      scan_position_ = position;
      return;
    }
    ++scan_kernel_;
    scan_position_ = 0;
  }
}

std::unique_ptr<Policy> make_policy(std::string_view name) { return make_policy(name, 0); }

std::unique_ptr<Policy> make_policy(std::string_view name, std::uint64_t resident_limit_bytes) {
  // "-lru": the same moves, victims least recently named (the engine before it learned loops).
  const bool lru = name.ends_with("-lru");
  if (lru) name.remove_suffix(4);
  // "-now": victims by predicted next use, nothing copied back ahead.
  const bool now_only = !lru && name.ends_with("-now");
  if (now_only) name.remove_suffix(4);
  // "-oracle": victims by the trace's true next use.
  const bool oracle = !lru && !now_only && name.ends_with("-oracle");
  if (oracle) name.remove_suffix(7);
  if (name == "deepum-ordered" || name == "deepum-place" || name == "deepum-swap") {
    OrderedPolicyOptions options;
    options.limit_bytes = resident_limit_bytes;
    options.moves.victims_by_next_use = !lru;
    options.moves.restore_ahead = !lru && !now_only;
    options.true_next_use = oracle;
    if (name != "deepum-ordered") {
      options.moves.prefetch = true;
      options.moves.discard_dead = true;
      options.moves.place_fresh = true;
      options.moves.swap = name == "deepum-swap";
    }
    return std::make_unique<OrderedPolicy>(options);
  }
  if (lru || now_only || oracle) return nullptr;
  if (name == "reactive") return std::make_unique<ReactivePolicy>(false);
  if (name == "reactive-migration") return std::make_unique<ReactivePolicy>(true);
  if (name == "deepum-reactive") return std::make_unique<BatchedReactivePolicy>();
  if (name == "oracle") return std::make_unique<OraclePolicy>();
  return nullptr;
}

std::vector<std::uint64_t> oracle_windows(std::uint64_t capacity_blocks) {
  std::vector<std::uint64_t> windows;
  for (const std::uint64_t w :
       {std::uint64_t{4}, std::uint64_t{16}, std::uint64_t{64}, std::uint64_t{256}, std::uint64_t{1024}}) {
    if (w < capacity_blocks) windows.push_back(w);
  }
  windows.push_back(OraclePolicy::kUnbounded);
  return windows;
}

SimResult simulate_oracle(const Workload& workload, const MachineModel& machine, const RunOptions& options) {
  const std::uint64_t capacity =
      options.capacity_blocks != 0 ? options.capacity_blocks : machine.capacity_bytes / core::kBlockBytes;
  std::optional<SimResult> best;
  for (std::uint64_t window : oracle_windows(capacity)) {
    OraclePolicy policy(window);
    SimResult result = simulate(workload, machine, policy, options);
    result.detail = window == OraclePolicy::kUnbounded ? "window unbounded"
                                                       : "window " + std::to_string(window) + " blocks";
    const auto measured = [](const SimResult& r) { return r.stats.total_ns - r.before_window.total_ns; };
    if (!best || measured(result) < measured(*best)) best = std::move(result);
  }
  return std::move(*best);
}

std::vector<std::string> policy_names() {
  return {"reactive",    "reactive-migration", "deepum-reactive",    "deepum-ordered", "deepum-place",
          "deepum-swap", "deepum-swap-lru",    "deepum-swap-oracle", "oracle"};
}

}  // namespace deepum::sim
