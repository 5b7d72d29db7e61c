#include "deepum/core/value_waits.hpp"

#include <algorithm>
#include <utility>

#include "deepum/core/stream_id.hpp"

namespace deepum::core {

namespace {
// The wait this thread is inside the driver call of: the one call in progress on a thread.
struct Entered {
  ValueWaits* waits = nullptr;
  ValueWaits::Stream stream;
};
thread_local Entered t_entered;

// A per-thread default stream is one thread's: only that thread can record in it.
bool recordable_here(const ValueWaits::Stream& stream) {
  return stream_handle(stream.id) != kPerThreadStreamHandle || stream.id == stream_id(kPerThreadStreamHandle);
}
}  // namespace

void ValueWaits::entered(Stream stream) noexcept {
  entered_.fetch_add(1, std::memory_order_acq_rel);
  t_entered = {this, stream};
}

bool ValueWaits::entered_on_this_thread() noexcept { return t_entered.waits != nullptr; }

void ValueWaits::set_waiting(Wait& wait, bool event_pending, bool unrecorded) {
  const bool before = wait.waiting();
  wait.event_pending = event_pending;
  wait.unrecorded = unrecorded;
  if (before != wait.waiting())
    wait.waiting() ? waiting_.fetch_add(1, std::memory_order_acq_rel)
                   : waiting_.fetch_sub(1, std::memory_order_acq_rel);
}

void ValueWaits::record(Wait& wait) {
  // Fires after every wait enqueued in the stream so far.
  if (ops_.record(wait.stream, wait.event)) set_waiting(wait, true, false);
}

void ValueWaits::enqueued(bool can_record) noexcept {
  if (t_entered.waits != this) return;
  const Entered entered = std::exchange(t_entered, {});
  {
    std::lock_guard lock(mutex_);
    try {
      auto it = std::find_if(waits_.begin(), waits_.end(),
                             [&](const Wait& w) { return w.stream == entered.stream; });
      if (it == waits_.end()) it = waits_.insert(waits_.end(), Wait{entered.stream});
      set_waiting(*it, it->event_pending, true);
      if (can_record) record(*it);
    } catch (const std::exception&) {
      // Out of memory for the list: this wait is not followed.
    }
  }
  entered_.fetch_sub(1, std::memory_order_acq_rel);
}

bool ValueWaits::any_waiting() noexcept {
  if (entered_.load(std::memory_order_acquire) == 0 && waiting_.load(std::memory_order_acquire) == 0)
    return false;
  std::lock_guard lock(mutex_);
  for (Wait& wait : waits_) {
    if (wait.unrecorded && recordable_here(wait.stream)) record(wait);
    if (wait.event_pending && ops_.fired(wait.event)) set_waiting(wait, false, wait.unrecorded);
  }
  return entered_.load(std::memory_order_acquire) != 0 || waiting_.load(std::memory_order_acquire) != 0;
}

void ValueWaits::forget_context(std::uint64_t context) noexcept {
  std::lock_guard lock(mutex_);
  for (Wait& wait : waits_) {
    if (wait.stream.context == context) set_waiting(wait, false, false);
  }
  std::erase_if(waits_, [context](const Wait& w) { return w.stream.context == context; });
}

}  // namespace deepum::core
