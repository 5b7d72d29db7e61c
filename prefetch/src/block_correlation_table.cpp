#include "deepum/prefetch/block_correlation_table.hpp"

#include <algorithm>
#include <deque>
#include <unordered_set>

namespace deepum::prefetch {
namespace {

constexpr std::size_t kNodeOverhead = 32;  // per hash-map node: next pointer, malloc's header

}  // namespace

BlockCorrelationTable::BlockCorrelationTable(std::size_t rows, std::size_t ways, std::size_t successors)
    : rows_(std::max<std::size_t>(rows, 1)),
      ways_(std::max<std::size_t>(ways, 1)),
      successors_per_row_(std::max<std::size_t>(successors, 1)) {}

std::size_t BlockCorrelationTable::set_of(BlockId block) const {
  // Fibonacci hashing: allocations a power of two apart would otherwise share sets.
  return static_cast<std::size_t>((block * 0x9e3779b97f4a7c15ull) >> 20) % rows_;
}

const BlockCorrelationTable::Row* BlockCorrelationTable::find(BlockId block) const {
  auto set = set_rows_.find(set_of(block));
  if (set == set_rows_.end()) return nullptr;
  for (std::size_t way = 0; way < ways_; ++way) {
    const Row& row = rows_storage_[set->second + way];
    if (row.last_use != 0 && row.block == block) return &row;
  }
  return nullptr;
}

std::size_t BlockCorrelationTable::row_for(BlockId block) {
  auto [set, added] = set_rows_.try_emplace(set_of(block), rows_storage_.size());
  if (added) {
    rows_storage_.resize(rows_storage_.size() + ways_);
    successor_storage_.resize(rows_storage_.size() * successors_per_row_);
  }
  const std::size_t first = set->second;
  std::size_t victim = first;
  for (std::size_t row = first; row < first + ways_; ++row) {
    if (rows_storage_[row].last_use != 0 && rows_storage_[row].block == block) {
      rows_storage_[row].last_use = ++clock_;
      return row;
    }
    if (rows_storage_[row].last_use < rows_storage_[victim].last_use) victim = row;  // empty rows are 0
  }
  rows_storage_[victim] = Row{block, ++clock_, 0};
  return victim;
}

void BlockCorrelationTable::add_successor(std::size_t row, BlockId successor) {
  Row& r = rows_storage_[row];
  const auto begin = successor_storage_.begin() + static_cast<std::ptrdiff_t>(row * successors_per_row_);
  const auto end = begin + static_cast<std::ptrdiff_t>(r.successor_count);
  auto found = std::find(begin, end, successor);
  if (found == end) {
    // New: shift the others down (the least recent falls off a full row) and put it first.
    if (r.successor_count < successors_per_row_) {
      ++r.successor_count;
      found = end;
    } else {
      found = end - 1;
    }
  }
  std::rotate(begin, found, found + 1);
  *begin = successor;
}

void BlockCorrelationTable::learn(std::span<const BlockId> touched) {
  if (touched.empty()) return;
  start_ = touched.front();
  std::size_t row = row_for(touched.front());
  for (std::size_t i = 1; i < touched.size(); ++i) {
    if (touched[i] == touched[i - 1]) continue;
    add_successor(row, touched[i]);
    row = row_for(touched[i]);
  }
}

std::span<const BlockId> BlockCorrelationTable::successors(BlockId block) const {
  const Row* row = find(block);
  if (row == nullptr) return {};
  const auto index = static_cast<std::size_t>(row - rows_storage_.data());
  return {successor_storage_.data() + index * successors_per_row_, row->successor_count};
}

std::vector<BlockId> BlockCorrelationTable::walk(BlockId from) const {
  std::vector<BlockId> order{from};
  std::unordered_set<BlockId> seen{from};
  for (std::size_t next = 0; next < order.size(); ++next) {
    for (BlockId successor : successors(order[next])) {
      if (seen.insert(successor).second) order.push_back(successor);
    }
  }
  return order;
}

std::size_t BlockCorrelationTable::memory_bytes() const {
  return sizeof(*this) + rows_storage_.capacity() * sizeof(Row) +
         successor_storage_.capacity() * sizeof(BlockId) +
         set_rows_.size() * (sizeof(std::pair<const std::size_t, std::size_t>) + kNodeOverhead) +
         set_rows_.bucket_count() * sizeof(void*);
}

}  // namespace deepum::prefetch
