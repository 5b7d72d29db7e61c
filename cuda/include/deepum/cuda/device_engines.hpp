// DeviceEngines: one launch-ordered engine per device the program allocates managed memory on,
// found by the context an operation is enqueued in. Each engine holds its own device's resident
// limit with its own streams, eviction thread and swap store, and places blocks on its own device.
//
// Engines are added by the allocation hooks (the first one when tracing starts) and never removed
// until exit: the launch and copy callbacks read them without a lock.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "deepum/cuda/stream_ordered_evictor.hpp"

namespace deepum::cuda {

class DeviceEngines {
 public:
  // Contexts remembered, engines or not; a context past these gets no engine (the driver evicts).
  static constexpr std::size_t kMaxContexts = 16;

  // The engine of `context`; 0 (not known) is the first context's. nullptr: none.
  StreamOrderedEvictor* of_context(std::uint64_t context) const {
    const std::size_t count = count_.load(std::memory_order_acquire);
    if (context == 0) return count != 0 ? entries_[0].engine : nullptr;
    for (std::size_t i = 0; i < count; ++i) {
      if (entries_[i].context == context) return entries_[i].engine;
    }
    return nullptr;
  }
  StreamOrderedEvictor* first() const { return of_context(0); }
  // Whether `context` was added, with an engine or without one.
  bool knows(std::uint64_t context) const {
    const std::size_t count = count_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < count; ++i) {
      if (entries_[i].context == context) return true;
    }
    return false;
  }
  // The engine of another context on `device`, or nullptr.
  StreamOrderedEvictor* of_device(int device) const {
    const std::size_t count = count_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < count; ++i) {
      if (entries_[i].device == device && entries_[i].engine != nullptr) return entries_[i].engine;
    }
    return nullptr;
  }
  // Adds `context` (of `device`) with `engine`, which may be null: then the context is only
  // remembered, so that it is not tried again. Returns the engine, or nullptr where the context
  // was known already or there is no room. Callers serialize through adding().
  StreamOrderedEvictor* add(std::uint64_t context, int device, std::unique_ptr<StreamOrderedEvictor> engine) {
    StreamOrderedEvictor* added = engine.get();
    if (!add_entry(context, device, added, std::move(engine))) return nullptr;
    if (added != nullptr) engines_.fetch_add(1, std::memory_order_relaxed);
    return added;
  }
  // Adds `context` as another context of `engine`'s device: one device, one engine and one limit.
  StreamOrderedEvictor* add_alias(std::uint64_t context, int device, StreamOrderedEvictor* engine) {
    return add_entry(context, device, engine, nullptr) ? engine : nullptr;
  }
  std::mutex& adding() { return adding_; }
  // How many contexts have an engine.
  std::size_t engines() const { return engines_.load(std::memory_order_relaxed); }
  // `each(engine, device, context)` for every engine (once each, with the context that made it),
  // in the order added.
  template <typename Each>
  void for_each(Each&& each) const {
    const std::size_t count = count_.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < count; ++i) {
      if (entries_[i].owned) each(*entries_[i].engine, entries_[i].device, entries_[i].context);
    }
  }

 private:
  struct Entry {
    std::uint64_t context = 0;
    int device = 0;
    StreamOrderedEvictor* engine = nullptr;  // owned here, or by an earlier entry of its device
    std::unique_ptr<StreamOrderedEvictor> owned;
  };
  // Written whole before count_ publishes it: readers take no lock.
  bool add_entry(std::uint64_t context, int device, StreamOrderedEvictor* engine,
                 std::unique_ptr<StreamOrderedEvictor> owned) {
    const std::size_t count = count_.load(std::memory_order_relaxed);
    if (knows(context) || count == kMaxContexts) return false;
    entries_[count].context = context;
    entries_[count].device = device;
    entries_[count].engine = engine;
    entries_[count].owned = std::move(owned);
    count_.store(count + 1, std::memory_order_release);
    return true;
  }
  std::array<Entry, kMaxContexts> entries_;
  std::atomic<std::size_t> count_{0};
  std::atomic<std::size_t> engines_{0};
  std::mutex adding_;
};

}  // namespace deepum::cuda
