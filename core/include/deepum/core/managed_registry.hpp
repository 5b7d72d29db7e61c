// ManagedRegistry: every managed range deepum handed to the program, keyed by base address.
// Thread-safe; lookups take a shared lock so concurrent readers (kernel-argument scans) do not
// serialise on allocations.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <shared_mutex>
#include <utility>
#include <vector>

#include "deepum/core/intercepted_api.hpp"

namespace deepum::core {

struct ManagedRange {
  std::uintptr_t base = 0;
  std::uint64_t bytes = 0;
  InterceptedApi allocated_by = InterceptedApi::cuda_malloc;
  int device = 0;  // current when it was allocated: its allocation limit is that device's

  bool contains(std::uintptr_t address) const { return address - base < bytes; }
};

class ManagedRegistry {
 public:
  // Records a new range. Returns false (and records nothing) if it overlaps a live range, which
  // would mean the driver handed out memory twice or we missed a free.
  bool insert(const ManagedRange& range);
  // Removes the range that starts exactly at `base`; nullopt if there is none (not ours).
  std::optional<ManagedRange> erase(std::uintptr_t base);
  // The live range containing `address`, if any.
  std::optional<ManagedRange> find_containing(std::uintptr_t address) const;
  // Whether a live range contains `address`: find_containing, remembered per thread for the 2 MB
  // block when one range holds all of it, until a range comes or goes. The launch callback asks
  // this for every pointer-like word, and a lock and a walk of the map cost more than the launch's
  // other work.
  bool contains(std::uintptr_t address) const;
  std::vector<ManagedRange> snapshot() const;
  std::uint64_t live_bytes() const;
  // Lowest base and highest end any range ever had: a cheap first filter for pointer scans.
  std::pair<std::uint64_t, std::uint64_t> address_span() const {
    return {span_low_.load(std::memory_order_relaxed), span_high_.load(std::memory_order_relaxed)};
  }
  std::size_t live_count() const;
  void clear();
  // Forgets the ranges of `device` (its context was reset, freeing them); returns their bytes.
  std::uint64_t forget_device(int device);

  // fork() safety: held across fork so the child never inherits a lock taken by another thread.
  void lock_for_fork() { mutex_.lock(); }
  void unlock_after_fork() { mutex_.unlock(); }  // in the parent
  // In the child: the lock is made anew rather than released (a read-write lock is released only
  // by the thread that took it, and the child's thread is another one: glibc took the release for
  // a reader's and every later lock waited for ever), and the parent's ranges are forgotten.
  void reset_in_child();

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::uintptr_t, ManagedRange> ranges_;  // by base
  std::uint64_t live_bytes_ = 0;
  std::atomic<std::uint64_t> span_low_{UINT64_MAX};
  std::atomic<std::uint64_t> span_high_{0};
  // Changed with every range that comes or goes, to a value no registry has had: one made where
  // another was is not answered from what the other's were.
  static std::uint64_t next_generation();
  std::atomic<std::uint64_t> generation_{next_generation()};
};

}  // namespace deepum::core
