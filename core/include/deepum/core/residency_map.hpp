// ResidencyMap: deepum's picture of which 2 MB blocks of managed memory sit in GPU memory, kept
// from CUPTI's faults and migrations and from deepum's own evictions, with the least recently used
// order that eviction draws its victims from. Pure C++; driven by one thread (the worker).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
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
  // The granule the program's own touches are remembered in: the driver's demand-paging unit.
  static constexpr std::uint64_t kPageBytes = 64 * 1024;
  static constexpr std::uint64_t kPagesPerBlock = kBlockBytes / kPageBytes;  // 32
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
  // A launch named this address among its arguments at `time`: its block is in use.
  void on_use(std::uint64_t address, Timestamp time);
  // deepum moved [address, address+bytes) to the host at `time` (0: no time known).
  void on_evicted(const AddressRange& range, Timestamp time = 0);
  // deepum asked for the range on the GPU at `time`: counted resident from now, so the next plan
  // does not ask again (the prefetch's own migration records that follow find it counted).
  void on_prefetched(const AddressRange& range, Timestamp time);

  std::uint64_t resident_bytes() const { return resident_bytes_; }
  std::uint64_t peak_resident_bytes() const { return peak_resident_bytes_; }
  // Blocks holding any GPU bytes, at most: the working set as whole 2 MB blocks, which is what
  // block prefetches move (pages fault in 64 KB at a time).
  std::uint64_t peak_resident_blocks() const { return peak_resident_blocks_; }
  std::uint64_t resident_bytes_of(BlockId block) const;

  // What the program itself has brought to the GPU of each block (demand faults and their
  // migrations, never deepum's prefetches), in 64 KB pages, ever. GPT-2 touched 6.66 GiB spread
  // over 4,781 blocks (9.3 GiB as whole blocks): prefetching whole blocks would move and hold 40%
  // more than the program uses. A block never touched counts as wholly used.
  std::uint64_t touched_bytes(BlockId block) const;
  // Whether the block's touched pages (all of it, if none known) are resident.
  bool touched_resident(BlockId block) const;
  // The touched parts of these ranges, in the order given: what a prefetch of them should move.
  std::vector<AddressRange> touched_parts(std::span<const AddressRange> ranges) const;
  std::size_t tracked_blocks() const { return blocks_.size(); }

  // Least recently used resident blocks covering at least `bytes_to_free`, as contiguous address
  // ranges inside managed memory. Blocks for which `is_protected` holds are taken only when the
  // unprotected ones do not cover the need.
  std::vector<AddressRange> choose_victims(std::uint64_t bytes_to_free,
                                           const std::function<bool(BlockId)>& is_protected) const;
  // Calls visit(block) for the resident blocks, least recently used first, until it returns false.
  void visit_least_recently_used(const std::function<bool(BlockId)>& visit) const;
  // The parts of the ranges that lie in live managed allocations, in the order given (a prefetch
  // plan is ordered by need); consecutive neighbours merge, but only within one allocation, since a
  // prefetch may not span two.
  std::vector<AddressRange> clip_to_managed(std::span<const AddressRange> ranges) const;

 private:
  struct Block {
    std::uint64_t capacity = 0;   // bytes of this block inside managed ranges
    std::uint64_t gpu_bytes = 0;  // of those, estimated resident on the GPU
    Timestamp last_use = 0;
    // When deepum last moved the block (prefetch or eviction). CUPTI's records arrive 0.1-2 s late;
    // a migration that started before deepum's own move is already accounted for by it, and
    // replaying it would resurrect an evicted block.
    Timestamp last_hint = 0;
    std::uint32_t touched_pages = 0;  // bit i: page i of the block was brought in by the program
    std::array<std::uint64_t, kGranulesPerBlock / 64> resident_granules{};  // bit i: granule i on the GPU
  };
  static_assert(kPagesPerBlock == 32, "touched_pages holds one bit per page");

  Block* find(BlockId block);
  void set_gpu_bytes(BlockId id, Block& block, std::uint64_t bytes);
  // Marks the granules of [lo, hi) (inside block `id`) resident or not, and updates the counts.
  void set_resident(BlockId id, Block& block, std::uint64_t lo, std::uint64_t hi, bool resident);
  void touch(BlockId id, Block& block, Timestamp time);
  // Marks the pages of [address, address+bytes) as touched by the program.
  void mark_touched(std::uint64_t address, std::uint64_t bytes);
  // Calls fn(block id, lo, hi) for every 2 MB block the range overlaps, [lo, hi) the overlap.
  template <typename Fn>
  static void for_each_block(std::uint64_t address, std::uint64_t bytes, Fn&& fn);
  // The same for the blocks the map holds, fn(block id, block, lo, hi): costs what the map holds
  // at most, however wide the range.
  template <typename Fn>
  void for_each_tracked_block(std::uint64_t address, std::uint64_t bytes, Fn&& fn);

  std::unordered_map<BlockId, Block> blocks_;
  std::set<std::pair<Timestamp, BlockId>> lru_;  // resident blocks, least recently used first
  bool faults_make_resident_;
  std::map<std::uint64_t, std::uint64_t> ranges_;  // live managed ranges: address -> bytes
  std::uint64_t resident_bytes_ = 0;
  std::uint64_t peak_resident_bytes_ = 0;
  std::uint64_t resident_blocks_ = 0, peak_resident_blocks_ = 0;
};

}  // namespace deepum::core
