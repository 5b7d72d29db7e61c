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
  // release(entry) frees the memory and the event. Returns how many were released. Neither runs
  // under the queue's lock (both call the driver); entries being decided are out of the queue, so
  // two threads reaping at once never release one twice.
  template <typename IsDone, typename Release>
  std::size_t reap(IsDone&& is_done, Release&& release) {
    std::vector<Entry> candidates, ready;
    {
      std::lock_guard lock(mutex_);
      candidates.swap(pending_);
    }
    try {
      ready.reserve(candidates.size());
    } catch (...) {
      give_back(candidates);  // out of memory: decided at a later reap
      return 0;
    }
    std::size_t kept = 0;
    for (const Entry& entry : candidates) {
      if (is_done(entry.completion)) {
        ready.push_back(entry);
      } else {
        candidates[kept++] = entry;
      }
    }
    candidates.resize(kept);
    give_back(candidates);
    for (const Entry& entry : ready) release(entry);
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
  // Entries taken out by reap go back in front of those pushed meanwhile.
  void give_back(std::vector<Entry>& entries) noexcept {
    std::lock_guard lock(mutex_);
    entries.swap(pending_);
    try {
      pending_.insert(pending_.end(), entries.begin(), entries.end());
    } catch (...) {
      // Out of memory: the frees pushed during the reap are lost, their memory held to the end.
    }
  }

  mutable std::mutex mutex_;
  std::vector<Entry> pending_;
};

}  // namespace deepum::core
