// DeferredFreeQueue: stream-ordered frees (cudaFreeAsync, cuMemFreeAsync) of managed memory.
// Managed memory has no stream-ordered free, so the free waits on an event recorded in the
// program's stream and happens once the event has fired: never under a kernel still using it.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

namespace deepum::core {

class DeferredFreeQueue {
 public:
  struct Entry {
    std::uintptr_t base = 0;
    void* completion = nullptr;  // the vendor's event handle
  };

  void push(const Entry& entry) {
    std::lock_guard lock(mutex_);
    pending_.push_back(entry);
  }

  // Releases every entry whose completion has fired: is_done(completion) decides, and
  // release(entry) frees the memory and the event. Returns how many were released.
  template <typename IsDone, typename Release>
  std::size_t reap(IsDone&& is_done, Release&& release) {
    std::vector<Entry> ready;
    {
      std::lock_guard lock(mutex_);
      auto keep = pending_.begin();
      for (auto& entry : pending_) {
        if (is_done(entry.completion)) {
          ready.push_back(entry);
        } else {
          *keep++ = entry;
        }
      }
      pending_.erase(keep, pending_.end());
    }
    for (const Entry& entry : ready) release(entry);  // outside the lock: release may block
    return ready.size();
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return pending_.size();
  }

  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork() { mutex_.unlock(); }

  void clear() {
    std::lock_guard lock(mutex_);
    pending_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<Entry> pending_;
};

}  // namespace deepum::core
