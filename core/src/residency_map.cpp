#include "deepum/core/residency_map.hpp"

#include <algorithm>
#include <bit>

namespace deepum::core {

ResidencyMap::Block* ResidencyMap::find(BlockId block) {
  auto it = blocks_.find(block);
  return it == blocks_.end() ? nullptr : &it->second;
}

namespace {
// One past the range's last byte, or the top of the address space for a range claiming more.
std::uint64_t range_end(std::uint64_t address, std::uint64_t bytes) {
  return bytes > UINT64_MAX - address ? UINT64_MAX : address + bytes;
}

// The bits of a block's 64 KB pages that [lo, hi) (inside the block) overlaps.
std::uint32_t page_bits(std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t first = (lo % kBlockBytes) / ResidencyMap::kPageBytes;
  const std::uint64_t last = ((hi - 1) % kBlockBytes) / ResidencyMap::kPageBytes;
  const std::uint64_t count = last - first + 1;
  return static_cast<std::uint32_t>((count >= 32 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1)
                                    << first);
}
}  // namespace

template <typename Fn>
void ResidencyMap::for_each_block(std::uint64_t address, std::uint64_t bytes, Fn&& fn) {
  if (bytes == 0) return;
  const std::uint64_t end = range_end(address, bytes);
  for (BlockId id = block_of(address); id <= block_of(end - 1); ++id) {
    fn(id, std::max(address, block_base(id)), std::min(end, block_base(id) + kBlockBytes));
  }
}

template <typename Fn>
void ResidencyMap::for_each_tracked_block(std::uint64_t address, std::uint64_t bytes, Fn&& fn) {
  if (bytes == 0) return;
  const std::uint64_t end = range_end(address, bytes);
  const BlockId first = block_of(address), last = block_of(end - 1);
  const auto visit = [&](BlockId id) {
    // Looked up again for each: fn may erase blocks.
    if (Block* block = find(id))
      fn(id, *block, std::max(address, block_base(id)), std::min(end, block_base(id) + kBlockBytes));
  };
  if (last - first < blocks_.size()) {
    for (BlockId id = first; id <= last; ++id) visit(id);
    return;
  }
  // A range wider than the map holds (a damaged trace's record can claim most of the address
  // space): walk the blocks held instead, in address order as above.
  std::vector<BlockId> held;
  for (const auto& entry : blocks_) {
    if (entry.first >= first && entry.first <= last) held.push_back(entry.first);
  }
  std::sort(held.begin(), held.end());
  for (BlockId id : held) visit(id);
}

void ResidencyMap::set_gpu_bytes(BlockId id, Block& block, std::uint64_t bytes) {
  bytes = std::min(bytes, block.capacity);
  if (block.gpu_bytes == bytes) return;
  if (block.gpu_bytes == 0) {
    lru_.emplace(block.last_use, id);
    peak_resident_blocks_ = std::max(peak_resident_blocks_, ++resident_blocks_);
  }
  if (bytes == 0) {
    lru_.erase({block.last_use, id});
    --resident_blocks_;
  }
  resident_bytes_ = resident_bytes_ - block.gpu_bytes + bytes;
  block.gpu_bytes = bytes;
  peak_resident_bytes_ = std::max(peak_resident_bytes_, resident_bytes_);
}

void ResidencyMap::set_resident(BlockId id, Block& block, std::uint64_t lo, std::uint64_t hi, bool resident) {
  if (lo >= hi) return;
  // Granules partly covered count whole: records and hints are granule aligned in practice.
  const std::uint64_t first = (lo % kBlockBytes) / kGranuleBytes;
  const std::uint64_t last = ((hi - 1) % kBlockBytes) / kGranuleBytes;
  std::uint64_t granules = 0;
  for (std::size_t word = 0; word < block.resident_granules.size(); ++word) {
    const std::uint64_t word_first = word * 64, word_last = word_first + 63;
    if (first <= word_last && last >= word_first) {
      const std::uint64_t from = std::max(first, word_first) - word_first;
      const std::uint64_t to = std::min(last, word_last) - word_first;
      const std::uint64_t bits =
          (to - from == 63 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (to - from + 1)) - 1)) << from;
      if (resident) {
        block.resident_granules[word] |= bits;
      } else {
        block.resident_granules[word] &= ~bits;
      }
    }
    granules += static_cast<std::uint64_t>(std::popcount(block.resident_granules[word]));
  }
  set_gpu_bytes(id, block, granules * kGranuleBytes);
}

void ResidencyMap::touch(BlockId id, Block& block, Timestamp time) {
  if (time <= block.last_use) return;
  if (block.gpu_bytes > 0) {
    lru_.erase({block.last_use, id});
    lru_.emplace(time, id);
  }
  block.last_use = time;
}

void ResidencyMap::on_range_allocated(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) return;
  ranges_[address] = bytes;
  for_each_block(address, bytes,
                 [&](BlockId id, std::uint64_t lo, std::uint64_t hi) { blocks_[id].capacity += hi - lo; });
}

void ResidencyMap::on_range_freed(std::uint64_t address, std::uint64_t bytes) {
  if (ranges_.erase(address) == 0) return;
  for_each_tracked_block(address, bytes, [&](BlockId id, Block& block, std::uint64_t lo, std::uint64_t hi) {
    const std::uint64_t overlap = hi - lo;
    // A block shared with a live range keeps only what was learned of that range's pages.
    block.touched_pages &= ~page_bits(lo, hi);
    set_resident(id, block, lo, hi, false);
    const std::uint64_t capacity = block.capacity > overlap ? block.capacity - overlap : 0;
    if (capacity == 0) {
      set_gpu_bytes(id, block, 0);
      blocks_.erase(id);
      return;
    }
    block.capacity = capacity;
    set_gpu_bytes(id, block, block.gpu_bytes);  // clamps to the smaller capacity
  });
}

void ResidencyMap::mark_touched(std::uint64_t address, std::uint64_t bytes) {
  for_each_tracked_block(address, bytes, [](BlockId, Block& block, std::uint64_t lo, std::uint64_t hi) {
    block.touched_pages |= page_bits(lo, hi);
  });
}

void ResidencyMap::on_fault(const PageFault& fault) {
  Block* block = find(block_of(fault.address));
  if (block == nullptr) return;
  if (fault.access != FaultAccess::prefetch) mark_touched(fault.address, 1);
  touch(block_of(fault.address), *block, fault.start);
  // The whole block (its managed part: the count is clamped to the capacity).
  const BlockId id = block_of(fault.address);
  if (faults_make_resident_) set_resident(id, *block, block_base(id), block_base(id) + kBlockBytes, true);
}

void ResidencyMap::on_migration(const Migration& migration) {
  const bool to_gpu = migration.direction == MigrationDirection::host_to_device;
  // What the program pulled in itself (not deepum's prefetches, whose cause is `prefetch`).
  if (to_gpu && migration.cause != MigrationCause::prefetch) mark_touched(migration.address, migration.bytes);
  for_each_tracked_block(migration.address, migration.bytes,
                         [&](BlockId id, Block& block, std::uint64_t lo, std::uint64_t hi) {
                           if (migration.start < block.last_hint) return;
                           // Whatever the cause (the driver's fault-time prefetching reports
                           // `prefetch` too): granules deepum already counted for its own hints
                           // stay counted once.
                           if (to_gpu) touch(id, block, migration.start);
                           set_resident(id, block, lo, hi, to_gpu);
                         });
}

void ResidencyMap::on_use(std::uint64_t address, Timestamp time) {
  if (Block* block = find(block_of(address))) touch(block_of(address), *block, time);
}

void ResidencyMap::on_evicted(const AddressRange& range, Timestamp time) {
  for_each_tracked_block(range.address, range.bytes,
                         [&](BlockId id, Block& block, std::uint64_t lo, std::uint64_t hi) {
                           block.last_hint = std::max(block.last_hint, time);
                           set_resident(id, block, lo, hi, false);
                         });
}

void ResidencyMap::on_prefetched(const AddressRange& range, Timestamp time) {
  for_each_tracked_block(range.address, range.bytes,
                         [&](BlockId id, Block& block, std::uint64_t lo, std::uint64_t hi) {
                           touch(id, block, time);
                           block.last_hint = std::max(block.last_hint, time);
                           set_resident(id, block, lo, hi, true);
                         });
}

std::uint64_t ResidencyMap::touched_bytes(BlockId block) const {
  auto it = blocks_.find(block);
  if (it == blocks_.end()) return kBlockBytes;
  const Block& b = it->second;
  if (b.touched_pages == 0) return b.capacity;
  return std::min<std::uint64_t>(b.capacity, std::uint64_t(std::popcount(b.touched_pages)) * kPageBytes);
}

bool ResidencyMap::touched_resident(BlockId block) const {
  auto it = blocks_.find(block);
  return it != blocks_.end() && it->second.capacity > 0 && it->second.gpu_bytes >= touched_bytes(block);
}

std::vector<AddressRange> ResidencyMap::touched_parts(std::span<const AddressRange> ranges) const {
  std::vector<AddressRange> parts;
  auto add = [&](std::uint64_t lo, std::uint64_t hi) {
    if (lo >= hi) return;
    if (!parts.empty() && parts.back().address + parts.back().bytes == lo) {
      parts.back().bytes += hi - lo;
    } else {
      parts.push_back({lo, hi - lo});
    }
  };
  for (const AddressRange& range : ranges) {
    for_each_block(range.address, range.bytes, [&](BlockId id, std::uint64_t lo, std::uint64_t hi) {
      auto it = blocks_.find(id);
      const std::uint32_t pages = it == blocks_.end() ? 0 : it->second.touched_pages;
      if (pages == 0) return add(lo, hi);
      for (std::uint64_t page = 0; page < kPagesPerBlock; ++page) {
        if ((pages >> page & 1) == 0) continue;
        const std::uint64_t page_lo = block_base(id) + page * kPageBytes;
        add(std::max(lo, page_lo), std::min(hi, page_lo + kPageBytes));
      }
    });
  }
  return parts;
}

std::uint64_t ResidencyMap::resident_bytes_of(BlockId block) const {
  auto it = blocks_.find(block);
  return it == blocks_.end() ? 0 : it->second.gpu_bytes;
}

std::vector<AddressRange> ResidencyMap::choose_victims(
    std::uint64_t bytes_to_free, const std::function<bool(BlockId)>& is_protected) const {
  std::vector<BlockId> chosen;
  std::uint64_t covered = 0;
  // First pass: unprotected blocks only; second pass, if still short: protected ones too.
  for (int pass = 0; pass < 2 && covered < bytes_to_free; ++pass) {
    for (const auto& [last_use, id] : lru_) {
      if (covered >= bytes_to_free) break;
      const bool protected_block = is_protected && is_protected(id);
      if (protected_block != (pass == 1)) continue;
      chosen.push_back(id);
      covered += blocks_.at(id).gpu_bytes;
    }
  }
  std::sort(chosen.begin(), chosen.end());
  std::vector<AddressRange> blocks;
  blocks.reserve(chosen.size());
  for (BlockId id : chosen) blocks.push_back({block_base(id), kBlockBytes});
  return clip_to_managed(blocks);
}

void ResidencyMap::visit_least_recently_used(const std::function<bool(BlockId)>& visit) const {
  for (const auto& entry : lru_) {
    if (!visit(entry.second)) return;
  }
}

std::vector<AddressRange> ResidencyMap::clip_to_managed(std::span<const AddressRange> input) const {
  std::vector<AddressRange> ranges;
  std::uint64_t last_range_base = 0;
  for (const AddressRange& wanted : input) {
    const std::uint64_t lo = wanted.address, hi = wanted.address + wanted.bytes;
    auto it = ranges_.upper_bound(lo);
    if (it != ranges_.begin()) --it;
    for (; it != ranges_.end() && it->first < hi; ++it) {
      std::uint64_t start = std::max(lo, it->first);
      const std::uint64_t end = std::min(hi, it->first + it->second);
      if (!ranges.empty() && last_range_base == it->first) {
        start = std::max(start, ranges.back().address + ranges.back().bytes);  // overlaps the last one
      }
      if (start >= end) continue;
      if (!ranges.empty() && last_range_base == it->first &&
          ranges.back().address + ranges.back().bytes == start) {
        ranges.back().bytes += end - start;
      } else {
        ranges.push_back({start, end - start});
        last_range_base = it->first;
      }
    }
  }
  return ranges;
}

}  // namespace deepum::core
