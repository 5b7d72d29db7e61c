#include "deepum/core/launch_ordered_residency.hpp"

#include <algorithm>

namespace deepum::core {

void LaunchOrderedResidency::on_range_allocated(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) return;
  ranges_[address] = bytes;
  for_each_block_of({address, bytes}, [&](BlockId id) {
    const std::uint64_t lo = std::max(address, block_base(id));
    const std::uint64_t hi = std::min(address + bytes, block_base(id) + kBlockBytes);
    Block& block = blocks_[id];
    block.capacity += hi - lo;
    // A block already resident for a neighbour counts whole: the superset stays a superset.
    if (block.resident) resident_bytes_ += hi - lo;
  });
}

void LaunchOrderedResidency::on_range_freed(std::uint64_t address, std::uint64_t bytes) {
  if (ranges_.erase(address) == 0) return;
  for_each_block_of({address, bytes}, [&](BlockId id) {
    auto it = blocks_.find(id);
    if (it == blocks_.end()) return;
    Block& block = it->second;
    const std::uint64_t lo = std::max(address, block_base(id));
    const std::uint64_t hi = std::min(address + bytes, block_base(id) + kBlockBytes);
    const std::uint64_t overlap = std::min(hi - lo, block.capacity);
    if (block.resident) resident_bytes_ -= overlap;
    block.capacity -= overlap;
    if (block.capacity == 0) {
      if (block.resident) lru_.erase(block.lru);
      blocks_.erase(it);
    }
  });
}

void LaunchOrderedResidency::make_resident(BlockId id, Block& block) {
  if (block.resident) {
    lru_.splice(lru_.end(), lru_, block.lru);  // most recently named now; no allocation
    return;
  }
  block.resident = true;
  block.lru = lru_.insert(lru_.end(), id);
  resident_bytes_ += block.capacity;
}

void LaunchOrderedResidency::make_evicted(BlockId, Block& block) {
  if (!block.resident) return;
  block.resident = false;
  lru_.erase(block.lru);
  resident_bytes_ -= block.capacity;
}

std::vector<AddressRange> LaunchOrderedResidency::victims(std::uint64_t bytes, std::uint64_t now) {
  std::vector<BlockId> chosen;
  std::uint64_t covered = 0;
  for (BlockId id : lru_) {
    if (covered >= bytes) break;
    const Block& block = blocks_.at(id);
    if (block.named_at == now) continue;  // the launch about to run needs it
    chosen.push_back(id);
    covered += block.capacity;
  }
  std::sort(chosen.begin(), chosen.end());
  // Each block's parts inside managed ranges; neighbours merge within one range (an eviction call
  // may not span two allocations).
  std::vector<AddressRange> ranges;
  std::uint64_t last_range = UINT64_MAX;
  for (BlockId id : chosen) {
    const std::uint64_t lo = block_base(id), hi = lo + kBlockBytes;
    auto it = ranges_.upper_bound(lo);
    if (it != ranges_.begin()) --it;
    for (; it != ranges_.end() && it->first < hi; ++it) {
      const std::uint64_t start = std::max(lo, it->first), end = std::min(hi, it->first + it->second);
      if (start >= end) continue;
      if (!ranges.empty() && last_range == it->first &&
          ranges.back().address + ranges.back().bytes == start) {
        ranges.back().bytes += end - start;
      } else {
        ranges.push_back({start, end - start});
        last_range = it->first;
      }
    }
    make_evicted(id, blocks_.at(id));
  }
  return ranges;
}

LaunchEviction LaunchOrderedResidency::before_launch(const KernelLaunch& launch, bool may_evict) {
  const std::uint64_t now = ++launch_seq_;
  ++stats_.launches;
  // The blocks the launch names, each once, and the bytes not yet counted.
  named_.clear();
  std::uint64_t new_bytes = 0;
  for (std::size_t i = 0; i < launch.pointer_count; ++i) {
    const std::uint64_t pointer = launch.pointers[i];
    std::uint64_t end = pointer + launch.extents[i];
    if (launch.extents[i] == 0) {
      // Tensor size unknown (no allocator inside the program to follow): to the end of its
      // allocation, which is the buffer itself for a program calling cudaMalloc per buffer.
      auto range = ranges_.upper_bound(pointer);
      if (range == ranges_.begin()) continue;
      --range;
      if (pointer >= range->first + range->second) continue;
      end = range->first + range->second;
    }
    for_each_block_of({pointer, end - pointer}, [&](BlockId id) {
      auto it = blocks_.find(id);
      if (it == blocks_.end() || it->second.named_at == now) return;
      it->second.named_at = now;
      if (!it->second.resident) new_bytes += it->second.capacity;
      named_.push_back(id);
    });
  }

  LaunchEviction decision;
  std::uint64_t projected = resident_bytes_ + pending_bytes_ + new_bytes;
  if (may_evict && projected > limit_ && pending_bytes_ != 0) {
    // The room the eviction in flight makes is needed now.
    decision.wait_for_pending = true;
    ++stats_.waits_for_pending;
    projected -= pending_bytes_;
    pending_bytes_ = 0;
  }
  if (may_evict && projected > limit_) {
    // Still over: evict a batch below the limit, and the launch waits for it.
    const std::uint64_t before = resident_bytes_;
    decision.evict = victims(projected - (limit_ - batch_), now);
    decision.wait_for_evict = true;
    ++stats_.waited_evictions;
    stats_.evicted_bytes += before - resident_bytes_;
  } else if (may_evict && pending_bytes_ == 0 && projected > limit_ - batch_) {
    // Within a batch of the limit: evict a batch alongside the program, waited for only when the
    // room is needed.
    const std::uint64_t before = resident_bytes_;
    decision.evict = victims(batch_, now);
    pending_bytes_ = before - resident_bytes_;
    stats_.evicted_bytes += pending_bytes_;
  }
  if (!decision.evict.empty()) ++stats_.evictions;
  for (BlockId id : named_) make_resident(id, blocks_.at(id));
  if (resident_bytes_ > limit_) ++stats_.launches_over_limit;
  stats_.peak_bytes = std::max(stats_.peak_bytes, resident_bytes_ + pending_bytes_);
  return decision;
}

void LaunchOrderedResidency::eviction_failed(const LaunchEviction& decision) {
  std::uint64_t restored = 0;
  for (const AddressRange& range : decision.evict) {
    for_each_block_of(range, [&](BlockId id) {
      auto it = blocks_.find(id);
      if (it == blocks_.end() || it->second.resident) return;
      make_resident(id, it->second);
      restored += it->second.capacity;
    });
  }
  if (!decision.wait_for_evict) pending_bytes_ -= std::min(pending_bytes_, restored);
  stats_.evicted_bytes -= std::min(stats_.evicted_bytes, restored);
  if (!decision.evict.empty() && stats_.evictions != 0) --stats_.evictions;
  if (decision.wait_for_evict && stats_.waited_evictions != 0) --stats_.waited_evictions;
}

}  // namespace deepum::core
