#include "deepum/core/unenqueued_operations.hpp"

#include <algorithm>

namespace deepum::core {

std::uint64_t UnenqueuedOperations::decided(std::uint64_t operation) {
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard lock(mutex_);
  std::uint64_t oldest = operation;
  bool found = false;
  for (Entry& entry : entries_) {
    if (entry.thread == self) {
      entry.operation = std::min(entry.operation, operation);
      found = true;
    }
    oldest = std::min(oldest, entry.operation);
  }
  if (!found) {
    entries_.push_back({self, operation});
    count_.store(entries_.size(), std::memory_order_relaxed);
  }
  return oldest;
}

void UnenqueuedOperations::enqueued() noexcept {
  // This thread's own entry, if any, was counted by this thread: a zero here means it has none.
  if (count_.load(std::memory_order_relaxed) == 0) return;
  const std::thread::id self = std::this_thread::get_id();
  std::lock_guard lock(mutex_);
  const auto mine = std::find_if(entries_.begin(), entries_.end(),
                                 [self](const Entry& entry) { return entry.thread == self; });
  if (mine == entries_.end()) return;
  *mine = entries_.back();
  entries_.pop_back();
  count_.store(entries_.size(), std::memory_order_relaxed);
}

std::uint64_t UnenqueuedOperations::oldest(std::uint64_t none) const {
  std::lock_guard lock(mutex_);
  std::uint64_t oldest = none;
  for (const Entry& entry : entries_) oldest = std::min(oldest, entry.operation);
  return oldest;
}

}  // namespace deepum::core
