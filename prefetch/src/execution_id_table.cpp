#include "deepum/prefetch/execution_id_table.hpp"

#include <algorithm>

namespace deepum::prefetch {
namespace {

// libstdc++ hash-map node overheads, for the memory estimate: next pointer, cached hash, malloc's header.
constexpr std::size_t kNodeOverhead = 32;

}  // namespace

ExecutionIdTable::ExecutionIdTable(std::size_t history_length)
    : history_length_(std::clamp<std::size_t>(history_length, 1, kMaxHistory)) {}

std::size_t ExecutionIdTable::HistoryHash::operator()(const History& history) const {
  std::uint64_t hash = 0xcbf29ce484222325ull ^ history.length;
  for (std::size_t i = 0; i < history.length; ++i) {
    hash = (hash ^ history.ids[i]) * 0x100000001b3ull;
  }
  return static_cast<std::size_t>(hash);
}

void ExecutionIdTable::push(History& history, ExecutionId id) const {
  if (history.length == history_length_) {
    std::copy(history.ids.begin() + 1, history.ids.begin() + static_cast<std::ptrdiff_t>(history.length),
              history.ids.begin());
    --history.length;
  }
  history.ids[history.length++] = id;
}

ExecutionId ExecutionIdTable::on_launch(std::uint64_t execution_key) {
  const auto [entry, added] = ids_.try_emplace(execution_key, static_cast<ExecutionId>(ids_.size()));
  const ExecutionId id = entry->second;
  if (history_.length > 0) {
    auto [successor, learned] = successors_.try_emplace(history_, Successor{id, 1});
    if (!learned) {
      Successor& s = successor->second;
      if (s.next == id) {
        s.confidence = static_cast<std::uint8_t>(std::min<int>(s.confidence + 1, kMaxConfidence));
      } else if (--s.confidence == 0) {
        s = Successor{id, 1};
      }
    }
  }
  push(history_, id);
  return id;
}

std::optional<ExecutionId> ExecutionIdTable::find(std::uint64_t execution_key) const {
  auto it = ids_.find(execution_key);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::vector<ExecutionId> ExecutionIdTable::predict(std::size_t n) const {
  std::vector<ExecutionId> predicted;
  predicted.reserve(n);
  History history = history_;
  while (predicted.size() < n) {
    auto it = successors_.find(history);
    if (it == successors_.end()) break;
    predicted.push_back(it->second.next);
    push(history, it->second.next);
  }
  return predicted;
}

std::uint8_t ExecutionIdTable::next_confidence() const {
  auto it = successors_.find(history_);
  return it == successors_.end() ? 0 : it->second.confidence;
}

std::size_t ExecutionIdTable::memory_bytes() const {
  return ids_.size() * (sizeof(std::pair<const std::uint64_t, ExecutionId>) + kNodeOverhead) +
         successors_.size() * (sizeof(std::pair<const History, Successor>) + kNodeOverhead) +
         (ids_.bucket_count() + successors_.bucket_count()) * sizeof(void*);
}

void ExecutionIdTable::clear() {
  ids_.clear();
  successors_.clear();
  history_ = History{};
}

}  // namespace deepum::prefetch
