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

// Where an event may be recorded after the wait's exit: streams that cannot have been destroyed.
// The legacy stream is the context's (EventOps checks the context); a per-thread one, its thread's.
bool recordable_late(const ValueWaits::Stream& stream) {
  const std::uint64_t handle = stream_handle(stream.id);
  if (handle == 0 || handle == kLegacyStreamHandle) return true;
  return handle == kPerThreadStreamHandle && stream.id == stream_id(kPerThreadStreamHandle);
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
    drop_forgotten_locked();
    try {
      auto it = std::find_if(waits_.begin(), waits_.end(),
                             [&](const Wait& w) { return w.stream == entered.stream; });
      if (it == waits_.end()) it = waits_.insert(waits_.end(), Wait{entered.stream});
      set_waiting(*it, it->event_pending, true);
      if (can_record) record(*it);
    } catch (const std::exception&) {
      // Out of memory for the list: this wait cannot be followed, so every engine holds from here on.
      waiting_.fetch_add(1, std::memory_order_acq_rel);
    }
  }
  entered_.fetch_sub(1, std::memory_order_acq_rel);
}

bool ValueWaits::any_waiting() noexcept {
  if (entered_.load(std::memory_order_acquire) == 0 && waiting_.load(std::memory_order_acquire) == 0)
    return false;
  std::lock_guard lock(mutex_);
  drop_forgotten_locked();
  for (Wait& wait : waits_) {
    // Its context being destroyed meanwhile (forget_context could not lock): no driver call on it.
    if (wait.stream.context == forgotten_context_.load(std::memory_order_acquire)) continue;
    if (wait.unrecorded && recordable_late(wait.stream)) record(wait);
    if (wait.event_pending && ops_.fired(wait.event)) set_waiting(wait, false, wait.unrecorded);
  }
  return entered_.load(std::memory_order_acquire) != 0 || waiting_.load(std::memory_order_acquire) != 0;
}

void ValueWaits::forget_context(std::uint64_t context) noexcept {
  forgotten_context_.store(context, std::memory_order_release);
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (lock.owns_lock()) drop_forgotten_locked();
}

void ValueWaits::drop_forgotten_locked() {
  const std::uint64_t context = forgotten_context_.exchange(0, std::memory_order_acq_rel);
  if (context == 0) return;
  for (Wait& wait : waits_) {
    if (wait.stream.context == context) set_waiting(wait, false, false);
  }
  std::erase_if(waits_, [context](const Wait& w) { return w.stream.context == context; });
}

}  // namespace deepum::core
