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

void ResidencyMap::set_gpu_bytes(Block& block, std::uint64_t bytes) {
  bytes = std::min(bytes, block.capacity);
  if (block.gpu_bytes == bytes) return;
  if (block.gpu_bytes == 0) peak_resident_blocks_ = std::max(peak_resident_blocks_, ++resident_blocks_);
  if (bytes == 0) --resident_blocks_;
  resident_bytes_ = resident_bytes_ - block.gpu_bytes + bytes;
  block.gpu_bytes = bytes;
  peak_resident_bytes_ = std::max(peak_resident_bytes_, resident_bytes_);
}

void ResidencyMap::set_resident(Block& block, std::uint64_t lo, std::uint64_t hi, bool resident) {
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
  set_gpu_bytes(block, granules * kGranuleBytes);
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
    set_resident(block, lo, hi, false);
    const std::uint64_t capacity = block.capacity > overlap ? block.capacity - overlap : 0;
    if (capacity == 0) {
      set_gpu_bytes(block, 0);
      blocks_.erase(id);
      return;
    }
    block.capacity = capacity;
    set_gpu_bytes(block, block.gpu_bytes);  // clamps to the smaller capacity
  });
}

void ResidencyMap::on_fault(const PageFault& fault) {
  Block* block = find(block_of(fault.address));
  if (block == nullptr) return;
  // The whole block (its managed part: the count is clamped to the capacity).
  const BlockId id = block_of(fault.address);
  if (faults_make_resident_) set_resident(*block, block_base(id), block_base(id) + kBlockBytes, true);
}

void ResidencyMap::on_migration(const Migration& migration) {
  const bool to_gpu = migration.direction == MigrationDirection::host_to_device;
  for_each_tracked_block(migration.address, migration.bytes,
                         [&](BlockId, Block& block, std::uint64_t lo, std::uint64_t hi) {
                           if (migration.start < block.last_hint) return;
                           // Whatever the cause (the driver's fault-time prefetching reports
                           // `prefetch` too): granules deepum already counted for its own hints
                           // stay counted once.
                           set_resident(block, lo, hi, to_gpu);
                         });
}

void ResidencyMap::on_evicted(const AddressRange& range, Timestamp time) {
  for_each_tracked_block(range.address, range.bytes,
                         [&](BlockId, Block& block, std::uint64_t lo, std::uint64_t hi) {
                           block.last_hint = std::max(block.last_hint, time);
                           set_resident(block, lo, hi, false);
                         });
}

std::uint64_t ResidencyMap::resident_bytes_of(BlockId block) const {
  auto it = blocks_.find(block);
  return it == blocks_.end() ? 0 : it->second.gpu_bytes;
}

}  // namespace deepum::core
