#include "deepum/core/launch_ordered_residency.hpp"

#include <algorithm>

namespace deepum::core {

void LaunchOrderedResidency::on_range_allocated(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) return;
  // A range still recorded at this address (its free not told yet): forgotten first, so that no
  // LRU entry points into blocks that are replaced.
  on_range_freed(address);
  Range& range = ranges_[address];
  range.address = address;
  range.bytes = bytes;
  range.blocks.assign(block_of(address + bytes - 1) - block_of(address) + 1, Block{});
}

void LaunchOrderedResidency::on_range_freed(std::uint64_t address) {
  auto it = ranges_.find(address);
  if (it == ranges_.end()) return;
  for (std::size_t index = 0; index < it->second.blocks.size(); ++index) make_evicted(it->second, index);
  ranges_.erase(it);
}

AddressRange LaunchOrderedResidency::part(const Range& range, std::size_t index) {
  const BlockId id = block_of(range.address) + index;
  const std::uint64_t lo = std::max(range.address, block_base(id));
  const std::uint64_t hi = std::min(range.address + range.bytes, block_base(id) + kBlockBytes);
  return {lo, hi - lo};
}

void LaunchOrderedResidency::make_resident(Range& range, std::size_t index) {
  Block& block = range.blocks[index];
  if (block.resident) {
    lru_.splice(lru_.end(), lru_, block.lru);  // most recently named now; no allocation
    return;
  }
  block.resident = true;
  block.lru = lru_.insert(lru_.end(), {&range, index});
  resident_bytes_ += part(range, index).bytes;
}

void LaunchOrderedResidency::make_evicted(Range& range, std::size_t index) {
  Block& block = range.blocks[index];
  if (!block.resident) return;
  block.resident = false;
  lru_.erase(block.lru);
  resident_bytes_ -= part(range, index).bytes;
}

std::vector<AddressRange> LaunchOrderedResidency::victims(std::uint64_t bytes, std::uint64_t now) {
  std::vector<LruEntry> chosen;
  std::uint64_t covered = 0;
  for (auto it = lru_.begin(); it != lru_.end() && covered < bytes;) {
    const LruEntry entry = *it++;  // advanced first: make_evicted erases this entry
    auto [range, index] = entry;
    if (range->blocks[index].named_at == now) continue;  // the launch about to run needs it
    chosen.push_back(entry);
    covered += part(*range, index).bytes;
    make_evicted(*range, index);
  }
  // In address order, neighbours merged within one range (an eviction call may not span two
  // allocations).
  std::sort(chosen.begin(), chosen.end(), [](const LruEntry& a, const LruEntry& b) {
    return part(*a.first, a.second).address < part(*b.first, b.second).address;
  });
  std::vector<AddressRange> merged;
  const Range* last_range = nullptr;
  for (auto [range, index] : chosen) {
    const AddressRange victim = part(*range, index);
    if (range == last_range && merged.back().address + merged.back().bytes == victim.address) {
      merged.back().bytes += victim.bytes;
    } else {
      merged.push_back(victim);
      last_range = range;
    }
  }
  return merged;
}

std::uint64_t LaunchOrderedResidency::name(std::uint64_t pointer, std::uint64_t extent, std::uint64_t now) {
  auto it = ranges_.upper_bound(pointer);
  if (it == ranges_.begin()) return 0;
  --it;
  Range& range = it->second;
  const std::uint64_t range_end = it->first + range.bytes;
  if (pointer >= range_end) return 0;  // not managed memory
  // Tensor size unknown (no allocator inside the program to follow): to the end of its
  // allocation, which is the buffer itself for a program calling cudaMalloc per buffer.
  const std::uint64_t end = extent != 0 ? std::min(range_end, pointer + extent) : range_end;
  const std::size_t first = block_of(pointer) - block_of(it->first);
  const std::size_t last = block_of(end - 1) - block_of(it->first);
  std::uint64_t new_bytes = 0;
  for (std::size_t index = first; index <= last; ++index) {
    Block& block = range.blocks[index];
    if (block.named_at == now) continue;
    block.named_at = now;
    if (!block.resident) new_bytes += part(range, index).bytes;
    named_.emplace_back(&range, index);
  }
  return new_bytes;
}

LaunchEviction LaunchOrderedResidency::before_launch(const KernelLaunch& launch, bool may_evict) {
  const std::uint64_t now = ++launch_seq_;
  named_.clear();
  std::uint64_t new_bytes = 0;
  for (std::size_t i = 0; i < launch.pointer_count; ++i)
    new_bytes += name(launch.pointers[i], launch.extents[i], now);
  return decide(new_bytes, now, may_evict);
}

LaunchEviction LaunchOrderedResidency::before_copy(const CopyLaunch& copy, bool may_evict) {
  const std::uint64_t now = ++launch_seq_;
  ++stats_.copies;
  named_.clear();
  std::uint64_t new_bytes = 0;
  if (copy.bytes != 0) {
    for (std::size_t i = 0; i < copy.operand_count && i < CopyLaunch::kMaxOperands; ++i)
      new_bytes += name(copy.operands[i], copy.bytes, now);
  }
  return decide(new_bytes, now, may_evict);
}

LaunchEviction LaunchOrderedResidency::decide(std::uint64_t new_bytes, std::uint64_t now, bool may_evict) {
  ++stats_.launches;
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
    // Nothing to evict (the launch names every resident block): nothing to wait for.
    decision.wait_for_evict = !decision.evict.empty();
    if (decision.wait_for_evict) ++stats_.waited_evictions;
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
  for (auto [range, index] : named_) make_resident(*range, index);
  if (resident_bytes_ > limit_) ++stats_.launches_over_limit;
  stats_.peak_bytes = std::max(stats_.peak_bytes, resident_bytes_ + pending_bytes_);
  return decision;
}

void LaunchOrderedResidency::eviction_failed(const LaunchEviction& decision) {
  std::uint64_t restored = 0;
  for (const AddressRange& evicted : decision.evict) {
    auto it = ranges_.upper_bound(evicted.address);
    if (it == ranges_.begin()) continue;
    --it;
    for (std::size_t index = block_of(evicted.address) - block_of(it->first);
         index <= block_of(evicted.address + evicted.bytes - 1) - block_of(it->first) &&
         index < it->second.blocks.size();
         ++index) {
      if (it->second.blocks[index].resident) continue;
      make_resident(it->second, index);
      restored += part(it->second, index).bytes;
    }
  }
  if (!decision.wait_for_evict) pending_bytes_ -= std::min(pending_bytes_, restored);
  stats_.evicted_bytes -= std::min(stats_.evicted_bytes, restored);
  if (!decision.evict.empty() && stats_.evictions != 0) --stats_.evictions;
  if (decision.wait_for_evict && stats_.waited_evictions != 0) --stats_.waited_evictions;
}

}  // namespace deepum::core
