#include "deepum/prefetch/prefetch_planner.hpp"

#include <algorithm>

namespace deepum::prefetch {
namespace {

using core::block_base;
using core::block_of;
using core::kBlockBytes;

// Blocks, in the given order, as ranges: a block right after the previous range's end extends it.
std::vector<AddressRange> coalesce(std::span<const BlockId> blocks) {
  std::vector<AddressRange> ranges;
  for (BlockId block : blocks) {
    if (!ranges.empty() && ranges.back().address + ranges.back().bytes == block_base(block)) {
      ranges.back().bytes += kBlockBytes;
    } else {
      ranges.push_back({block_base(block), kBlockBytes});
    }
  }
  return ranges;
}

// Sorted, with overlapping and touching ranges merged.
std::vector<AddressRange> merge(std::span<const AddressRange> ranges) {
  std::vector<AddressRange> sorted(ranges.begin(), ranges.end());
  std::erase_if(sorted, [](const AddressRange& r) { return r.bytes == 0; });
  std::sort(sorted.begin(), sorted.end(),
            [](const AddressRange& a, const AddressRange& b) { return a.address < b.address; });
  std::vector<AddressRange> merged;
  for (const AddressRange& range : sorted) {
    if (!merged.empty() && range.address <= merged.back().address + merged.back().bytes) {
      merged.back().bytes =
          std::max(merged.back().address + merged.back().bytes, range.address + range.bytes) -
          merged.back().address;
    } else {
      merged.push_back(range);
    }
  }
  return merged;
}

}  // namespace

PrefetchPlanner::PrefetchPlanner(const PrefetchOptions& options)
    : options_(options),
      execution_ids_(options.history_length),
      lookahead_(std::clamp(options.lookahead, options.min_lookahead,
                            std::max(options.min_lookahead, options.max_lookahead))) {}

PrefetchPlanner::KernelModel& PrefetchPlanner::model(ExecutionId id) {
  while (models_.size() <= id) {
    models_.push_back({BlockCorrelationTable(options_.rows, options_.ways, options_.successors)});
    table_bytes_ += models_.back().table.memory_bytes();
  }
  return models_[id];
}

const PrefetchPlanner::KernelModel* PrefetchPlanner::find_model(ExecutionId id) const {
  return id < models_.size() ? &models_[id] : nullptr;
}

void PrefetchPlanner::forget_everything() {
  execution_ids_.clear();
  models_.clear();
  table_bytes_ = 0;
  pending_.clear();
  restart_block_.reset();
  last_window_.clear();
  ++resets_;
}

template <typename Fn>
void PrefetchPlanner::for_each_pointer_block(const PendingLaunch& launch, Fn&& add) const {
  for (std::size_t i = 0; i < launch.pointer_count; ++i) {
    if (!options_.pointer_extents) {
      add(block_of(launch.pointers[i]));
      continue;
    }
    // The allocator's own size where known; else up to the next buffer launches have shown.
    core::for_each_block_of(launch.extents[i] != 0 ? AddressRange{launch.pointers[i], launch.extents[i]}
                                                   : extents_.extent(launch.pointers[i]),
                            add);
  }
}

void PrefetchPlanner::on_launch(const core::KernelLaunch& launch) {
  if (execution_ids_.ids() >= options_.max_execution_ids && !execution_ids_.find(launch.execution_key)) {
    forget_everything();
  }
  PendingLaunch pending;
  pending.correlation_id = launch.correlation_id;
  pending.stream = launch.stream;
  pending.id = execution_ids_.on_launch(launch.execution_key);
  pending.pointer_count =
      static_cast<std::uint16_t>(std::min<std::size_t>(launch.pointer_count, launch.pointers.size()));
  for (std::size_t i = 0; i < pending.pointer_count; ++i) {
    pending.pointers[i] = launch.pointers[i];
    pending.extents[i] = launch.extents[i];
    if (options_.pointer_extents) extents_.note(launch.pointers[i]);
  }
  pending_.push_back(pending);
  if (pending_.size() > kMaxPendingLaunches) pending_.pop_front();
}

void PrefetchPlanner::on_kernel_executed(std::uint64_t correlation_id) {
  bool first_running = true;
  for (PendingLaunch& launch : pending_) {
    if (launch.correlation_id == correlation_id) {
      launch.executed = true;
      if (first_running) restart_block_.reset();  // the running kernel is done with it
      return;
    }
    if (!launch.executed) first_running = false;
  }
}

void PrefetchPlanner::on_stream_progress(std::uint64_t stream, std::uint64_t correlation_id) {
  bool running_done = false;  // whether the first unexecuted launch is among those done now
  bool first_running = true;
  for (PendingLaunch& launch : pending_) {
    if (launch.correlation_id >= correlation_id) break;  // launch order is correlation order
    if (launch.executed) continue;
    if (launch.stream == stream) {
      launch.executed = true;
      running_done = running_done || first_running;
    }
    first_running = false;
  }
  if (running_done) restart_block_.reset();
}

void PrefetchPlanner::on_kernel_complete(std::uint64_t correlation_id, std::span<const BlockId> faulted) {
  auto launch = std::find_if(pending_.begin(), pending_.end(),
                             [&](const PendingLaunch& p) { return p.correlation_id == correlation_id; });
  if (launch == pending_.end()) return;  // launch not seen, or already forgotten
  std::vector<BlockId> touched;
  std::unordered_set<BlockId> seen;
  auto add = [&](BlockId block) {
    if (seen.insert(block).second) touched.push_back(block);
  };
  for_each_pointer_block(*launch, add);
  for (BlockId block : faulted) add(block);

  KernelModel& m = model(launch->id);
  // Judge the table before it learns this run: did it predict what the kernel touched?
  if (auto start = m.table.start_block(); start && !touched.empty()) {
    const std::vector<BlockId> predicted = m.table.walk(*start);
    const std::unordered_set<BlockId> predicted_set(predicted.begin(), predicted.end());
    const auto hits = static_cast<std::size_t>(std::count_if(
        touched.begin(), touched.end(), [&](BlockId b) { return predicted_set.count(b) != 0; }));
    if (2 * hits >= touched.size()) {
      m.trust = static_cast<std::uint8_t>(std::min<int>(m.trust + 1, KernelModel::kMaxTrust));
    } else if (m.trust > 0) {
      --m.trust;
    }
  }
  table_bytes_ -= m.table.memory_bytes();
  m.table.learn(touched);
  table_bytes_ += m.table.memory_bytes();

  if (!launch->executed) on_kernel_executed(correlation_id);
  pending_.erase(launch);
  if (memory_bytes() > options_.max_table_bytes) forget_everything();
}

void PrefetchPlanner::on_fault(BlockId block) {
  if (last_window_.count(block) == 0) restart_block_ = block;
}

void PrefetchPlanner::on_prefetch_outcome(PrefetchOutcome outcome) {
  late_ += outcome == PrefetchOutcome::late ? 1 : 0;
  wasted_ += outcome == PrefetchOutcome::wasted ? 1 : 0;
  if (++outcomes_ < kOutcomeWindow) return;
  constexpr std::size_t kSignificant = kOutcomeWindow / 8;
  if (late_ >= kSignificant && late_ > wasted_) {
    lookahead_ = std::min(lookahead_ * 2, std::max(options_.min_lookahead, options_.max_lookahead));
  } else if (wasted_ >= kSignificant && wasted_ > late_) {
    lookahead_ = std::max(lookahead_ / 2, options_.min_lookahead);
  }
  outcomes_ = late_ = wasted_ = 0;
}

void PrefetchPlanner::add_kernel_blocks(ExecutionId id, const PendingLaunch* launch,
                                        std::optional<BlockId> restart, std::vector<BlockId>& window,
                                        std::unordered_set<BlockId>& seen) const {
  const std::size_t first = window.size();
  auto add = [&](BlockId block) {
    if (seen.insert(block).second) window.push_back(block);
  };
  if (launch != nullptr) for_each_pointer_block(*launch, add);
  if (const KernelModel* m = find_model(id); m != nullptr && m->trust > 0) {
    if (restart) {
      for (BlockId block : m->table.walk(*restart)) add(block);
    }
    if (auto start = m->table.start_block()) {
      for (BlockId block : m->table.walk(*start)) add(block);
    }
  }
  // Ascending within a kernel, so its blocks coalesce into as few ranges as possible.
  std::sort(window.begin() + static_cast<std::ptrdiff_t>(first), window.end());
}

std::vector<BlockId> PrefetchPlanner::predicted_blocks() const {
  std::vector<BlockId> window;
  std::unordered_set<BlockId> seen;
  std::size_t kernels = 0;
  // The known future first: launches the GPU has not finished, the oldest (running) one first.
  for (const PendingLaunch& launch : pending_) {
    if (launch.executed) continue;
    if (kernels == lookahead_) return window;
    add_kernel_blocks(launch.id, &launch, kernels == 0 ? restart_block_ : std::nullopt, window, seen);
    ++kernels;
  }
  // Then the predicted future, from the history the last launch left.
  for (ExecutionId id : execution_ids_.predict(lookahead_ - kernels)) {
    add_kernel_blocks(id, nullptr, std::nullopt, window, seen);
  }
  return window;
}

Plan PrefetchPlanner::plan(const ResidencyView& residency, std::span<const AddressRange> dead) {
  Plan plan;
  plan.discard = merge(dead);
  const std::vector<BlockId> window = predicted_blocks();
  last_window_ = std::unordered_set<BlockId>(window.begin(), window.end());

  // What is worth holding: the window's nearest blocks, as many as their footprints fit below the
  // headroom. Blocks further out are needed too, but cannot be held before the nearer ones are done.
  const std::uint64_t limit = residency.limit_bytes();
  const std::uint64_t budget = limit > options_.headroom_bytes ? limit - options_.headroom_bytes : 0;
  std::size_t fitting = 0;
  for (std::uint64_t held = 0; fitting < window.size(); ++fitting) {
    held += residency.footprint_bytes(window[fitting]);
    if (held > budget) break;
  }
  const std::unordered_set<BlockId> keep(window.begin(),
                                         window.begin() + static_cast<std::ptrdiff_t>(fitting));
  std::vector<BlockId> prefetch;
  std::vector<std::uint64_t> missing;  // bytes each prefetch adds
  std::uint64_t missing_total = 0;
  for (std::size_t i = 0; i < fitting; ++i) {
    if (residency.is_resident(window[i])) continue;
    const std::uint64_t footprint = residency.footprint_bytes(window[i]);
    const std::uint64_t there = residency.resident_bytes_of(window[i]);
    prefetch.push_back(window[i]);
    missing.push_back(footprint > there ? footprint - there : 0);
    missing_total += missing.back();
  }

  // Room for them: evict blocks no kept block is, dead ones first (discarded, they move nothing),
  // then the least recently used.
  const std::uint64_t resident = residency.resident_bytes();
  const std::uint64_t wanted = resident + missing_total;
  const std::uint64_t to_free = wanted > budget ? wanted - budget : 0;
  std::vector<BlockId> victims;
  std::unordered_set<BlockId> chosen;
  std::uint64_t freed = 0;
  auto take = [&](BlockId block) {
    if (freed >= to_free) return false;
    if (keep.count(block) == 0 && chosen.insert(block).second) {
      victims.push_back(block);
      freed += residency.resident_bytes_of(block);
    }
    return true;
  };
  for (const AddressRange& range : plan.discard) {
    // Only whole blocks: a partial one still holds live data around the dead range.
    const BlockId first = block_of(range.address + kBlockBytes - 1);
    const BlockId end = block_of(range.address + range.bytes);
    for (BlockId block = first; block < end; ++block) {
      if (residency.is_resident(block) && !take(block)) break;
    }
  }
  residency.visit_least_recently_used(take);
  // Prefetch now only into room that is free now: the evictions run on their own stream, at a
  // fifth of the prefetches' speed, and a prefetch waiting for them would arrive late. The room
  // they make serves the next plan.
  const std::uint64_t free_now = budget > resident ? budget - resident : 0;
  std::size_t now = 0;
  for (std::uint64_t adding = 0; now < prefetch.size(); ++now) {
    adding += missing[now];
    if (adding > free_now) break;
  }
  prefetch.resize(now);
  std::sort(victims.begin(), victims.end());
  plan.evict = coalesce(victims);
  plan.prefetch = coalesce(prefetch);
  return plan;
}

std::size_t PrefetchPlanner::memory_bytes() const {
  return execution_ids_.memory_bytes() + table_bytes_ + models_.capacity() * sizeof(KernelModel) +
         pending_.size() * sizeof(PendingLaunch) + last_window_.size() * 2 * sizeof(BlockId) +
         extents_.starts() * PointerExtents::kBytesPerStart;
}

}  // namespace deepum::prefetch
