// ResidencyMap: deepum's picture of which 2 MB blocks of managed memory sit in GPU memory, kept
// from CUPTI's faults and migrations and from the engine's own moves: what the summary reports as
// the estimated peak residency. It only observes; the engine decides from its own model. Pure C++;
// driven by one thread (the worker).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <span>
#include <unordered_map>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::core {

struct AddressRange {
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  bool operator==(const AddressRange&) const = default;
};

// Calls fn(block) for every 2 MB block the range overlaps.
template <typename Fn>
void for_each_block_of(const AddressRange& range, Fn&& fn) {
  if (range.bytes == 0) return;
  for (BlockId block = block_of(range.address); block <= block_of(range.address + range.bytes - 1); ++block)
    fn(block);
}

inline std::uint64_t total_bytes(std::span<const AddressRange> ranges) {
  std::uint64_t bytes = 0;
  for (const AddressRange& range : ranges) bytes += range.bytes;
  return bytes;
}

class ResidencyMap {
 public:
  // The granule residency is kept in: the smallest unit the driver migrates. Kept per granule, so
  // a record of bytes already counted (deepum's own prefetch, a late duplicate) changes nothing,
  // whatever its cause.
  static constexpr std::uint64_t kGranuleBytes = 4096;
  static constexpr std::uint64_t kGranulesPerBlock = kBlockBytes / kGranuleBytes;  // 512

  // Whether a GPU fault counts its block as resident. True suits memory first touched on the GPU,
  // which the driver fills in place and reports no migration for. False when deepum places new
  // ranges on the host first: then every byte reaching the GPU comes with a migration record and
  // the estimate is exact.
  explicit ResidencyMap(bool faults_make_resident = true) : faults_make_resident_(faults_make_resident) {}

  void on_range_allocated(std::uint64_t address, std::uint64_t bytes);
  void on_range_freed(std::uint64_t address, std::uint64_t bytes);
  // A GPU fault makes its block resident: the driver maps at least the faulting block.
  void on_fault(const PageFault& fault);
  void on_migration(const Migration& migration);
  // deepum moved [address, address+bytes) to the host at `time` (0: no time known).
  void on_evicted(const AddressRange& range, Timestamp time = 0);

  std::uint64_t resident_bytes() const { return resident_bytes_; }
  std::uint64_t peak_resident_bytes() const { return peak_resident_bytes_; }
  // Blocks holding any GPU bytes, at most: the working set as whole 2 MB blocks, which is what
  // block prefetches move (pages fault in 64 KB at a time).
  std::uint64_t peak_resident_blocks() const { return peak_resident_blocks_; }
  std::uint64_t resident_bytes_of(BlockId block) const;

  std::size_t tracked_blocks() const { return blocks_.size(); }

 private:
  struct Block {
    std::uint64_t capacity = 0;   // bytes of this block inside managed ranges
    std::uint64_t gpu_bytes = 0;  // of those, estimated resident on the GPU
    // When deepum last moved the block out. CUPTI's records arrive 0.1-2 s late;
    // a migration that started before deepum's own move is already accounted for by it, and
    // replaying it would resurrect an evicted block.
    Timestamp last_hint = 0;
    std::array<std::uint64_t, kGranulesPerBlock / 64> resident_granules{};  // bit i: granule i on the GPU
  };

  Block* find(BlockId block);
  void set_gpu_bytes(Block& block, std::uint64_t bytes);
  // Marks the granules of [lo, hi) (inside the block) resident or not, and updates the counts.
  void set_resident(Block& block, std::uint64_t lo, std::uint64_t hi, bool resident);
  // Calls fn(block id, lo, hi) for every 2 MB block the range overlaps, [lo, hi) the overlap.
  template <typename Fn>
  static void for_each_block(std::uint64_t address, std::uint64_t bytes, Fn&& fn);
  // The same for the blocks the map holds, fn(block id, block, lo, hi): costs what the map holds
  // at most, however wide the range.
  template <typename Fn>
  void for_each_tracked_block(std::uint64_t address, std::uint64_t bytes, Fn&& fn);

  std::unordered_map<BlockId, Block> blocks_;
  bool faults_make_resident_;
  std::map<std::uint64_t, std::uint64_t> ranges_;  // live managed ranges: address -> bytes
  std::uint64_t resident_bytes_ = 0;
  std::uint64_t peak_resident_bytes_ = 0;
  std::uint64_t resident_blocks_ = 0, peak_resident_blocks_ = 0;
};

}  // namespace deepum::core
