// BlockCorrelationTable: what one kernel (one execution ID) touches, at 2 MB block granularity, as
// DeepUM keeps it: set-associative rows keyed by block, each holding the blocks that followed it in
// the kernel's touch order (most recent first), plus the block the kernel touched first. Sets are
// allocated on first use, so a kernel that touches a few blocks costs a few rows, not the full
// rows x ways array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::prefetch {

using core::BlockId;

class BlockCorrelationTable {
 public:
  BlockCorrelationTable(std::size_t rows, std::size_t ways, std::size_t successors);

  // Learns from the blocks one run of the kernel touched, in touch order: each block's row gets the
  // next block as its most recent successor; the first block becomes the start block. A full set
  // gives up its least recently used row.
  void learn(std::span<const BlockId> touched);

  std::optional<BlockId> start_block() const { return start_; }
  // The successors of block, most recent first; empty when the table has no row for it.
  std::span<const BlockId> successors(BlockId block) const;
  // Every block reachable from `from` through successors, `from` first, breadth first (nearest
  // successors before their own), each once. Bounded by the table's size.
  std::vector<BlockId> walk(BlockId from) const;

  std::size_t allocated_sets() const { return set_rows_.size(); }
  std::size_t memory_bytes() const;  // an estimate, hash-map nodes included

 private:
  struct Row {
    BlockId block = 0;
    std::uint64_t last_use = 0;  // 0: empty
    std::uint32_t successor_count = 0;
  };

  std::size_t set_of(BlockId block) const;
  const Row* find(BlockId block) const;
  // The row of block, allocated (its set too) if missing.
  std::size_t row_for(BlockId block);
  void add_successor(std::size_t row, BlockId successor);

  std::size_t rows_;
  std::size_t ways_;
  std::size_t successors_per_row_;
  std::unordered_map<std::size_t, std::size_t> set_rows_;  // set index -> index of its first way in rows_
  std::vector<Row> rows_storage_;
  std::vector<BlockId> successor_storage_;  // successors_per_row_ slots per row, parallel to rows_storage_
  std::optional<BlockId> start_;
  std::uint64_t clock_ = 0;
};

}  // namespace deepum::prefetch
