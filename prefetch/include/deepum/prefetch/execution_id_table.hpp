// ExecutionIdTable: DeepUM's next-kernel predictor. Each launch's execution key (function, shape,
// managed pointers: stable across training iterations because the caching allocator hands out the
// same addresses) becomes a small dense ID; the table learns which ID follows each history of the
// last few IDs and walks that relation forward to predict the kernels to come.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

namespace deepum::prefetch {

using ExecutionId = std::uint32_t;

class ExecutionIdTable {
 public:
  static constexpr std::size_t kMaxHistory = 8;
  // A successor is replaced only after this many consecutive contrary observations (at most), so
  // one deviating kernel does not unlearn a loop, while a changed loop is learned within two turns.
  static constexpr std::uint8_t kMaxConfidence = 2;

  explicit ExecutionIdTable(std::size_t history_length = 3);

  // The key's ID (new keys get the next free one); learns "current history -> this ID" and makes
  // the ID the newest of the history.
  ExecutionId on_launch(std::uint64_t execution_key);
  std::optional<ExecutionId> find(std::uint64_t execution_key) const;
  // Up to n IDs predicted to follow the current history, nearest first; stops at the first history
  // never seen.
  std::vector<ExecutionId> predict(std::size_t n) const;
  // The confidence (1..kMaxConfidence) of the prediction that follows the current history; 0: none.
  std::uint8_t next_confidence() const;

  std::size_t ids() const { return ids_.size(); }
  std::size_t histories() const { return successors_.size(); }
  std::size_t memory_bytes() const;  // an estimate, hash-map nodes included
  void clear();

 private:
  struct History {
    std::array<ExecutionId, kMaxHistory> ids{};
    std::size_t length = 0;
    bool operator==(const History& other) const { return ids == other.ids && length == other.length; }
  };
  struct HistoryHash {
    std::size_t operator()(const History& history) const;
  };
  struct Successor {
    ExecutionId next = 0;
    std::uint8_t confidence = 1;
  };

  void push(History& history, ExecutionId id) const;

  std::size_t history_length_;
  std::unordered_map<std::uint64_t, ExecutionId> ids_;
  std::unordered_map<History, Successor, HistoryHash> successors_;
  History history_;
};

}  // namespace deepum::prefetch
