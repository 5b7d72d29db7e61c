// UnenqueuedOperations: the operations (launches, copies, memsets) whose moves are decided, at the
// entry of their driver call, while that call has not returned yet, one per program thread.
//
// Why: the driver enqueues an operation only inside its call, after deepum's decision. An event
// another thread records in the same stream meanwhile lands before the operation, so a move
// ordered after that event (a copy out, a drop) could run before it reads or writes the memory.
// The model takes no victim such an operation named, and a progress marker counts only what was
// enqueued when it was recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace deepum::core {

class UnenqueuedOperations {
 public:
  // The calling thread's operation `operation` (numbered in decision order) is decided. A thread
  // whose earlier operation was never reported enqueued (an NCCL call whose kernels come at the
  // group's end) keeps the older number. Returns oldest(operation), found under the same lock.
  std::uint64_t decided(std::uint64_t operation);
  // The calling thread's driver call returned: what it decided is enqueued.
  void enqueued() noexcept;
  // The oldest operation decided and not enqueued yet; `none` when every one is.
  std::uint64_t oldest(std::uint64_t none) const;

 private:
  struct Entry {
    std::thread::id thread;
    std::uint64_t operation = 0;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
  // entries_.size(): a thread that has no entry sees 0 or another thread's, and its enqueued()
  // then takes the lock only when some thread is inside a call.
  std::atomic<std::size_t> count_{0};
};

}  // namespace deepum::core
