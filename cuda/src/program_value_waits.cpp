#include "deepum/cuda/program_value_waits.hpp"

#include <algorithm>
#include <utility>

#include "deepum/core/stream_id.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {
// The waits this thread entered and has not seen return: the one driver call in progress.
thread_local ProgramValueWaits* t_waits = nullptr;
thread_local std::uint64_t t_stream_id = 0;
}  // namespace

void ProgramValueWaits::entered(std::uint64_t stream_id) noexcept {
  auto* stream = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(core::stream_handle(stream_id)));
  // The legacy stream is never captured (and asking during another thread's capture is an error).
  if (stream != nullptr) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream_is_capturing.get() == nullptr || stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE)
      return;
  }
  entered_.fetch_add(1, std::memory_order_acq_rel);
  t_waits = this;
  t_stream_id = stream_id;
}

void ProgramValueWaits::enqueued() noexcept {
  if (t_waits != this) return;
  t_waits = nullptr;
  std::lock_guard lock(mutex_);
  if (!forgotten_) {
    try {
      const std::uint64_t id = t_stream_id;
      auto it = std::find_if(waits_.begin(), waits_.end(), [id](const Wait& w) { return w.stream_id == id; });
      if (it == waits_.end()) it = waits_.insert(waits_.end(), Wait{id});
      Wait& wait = *it;
      wait.stream = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(core::stream_handle(id)));
      // Created here, in the program's context, current at the call's exit.
      if (wait.passed == nullptr && event_create.get()(&wait.passed, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
        wait.passed = nullptr;
      wait.recorded = wait.passed != nullptr && event_record.get()(wait.passed, wait.stream) == CUDA_SUCCESS;
      if (!std::exchange(wait.waiting, true)) waiting_.fetch_add(1, std::memory_order_acq_rel);
    } catch (const std::exception&) {
      // Out of memory for the list: this wait is not remembered.
    }
  }
  entered_.fetch_sub(1, std::memory_order_acq_rel);
}

bool ProgramValueWaits::any_waiting() noexcept {
  if (entered_.load(std::memory_order_acquire) == 0 && waiting_.load(std::memory_order_acquire) == 0)
    return false;
  std::lock_guard lock(mutex_);
  for (Wait& wait : waits_) {
    if (!wait.waiting) continue;
    // Without its event, the stream itself, where another thread can name it: this thread's
    // per-thread stream it cannot, and that wait stays held.
    if (!wait.recorded && (wait.stream == CU_STREAM_PER_THREAD || stream_query.get() == nullptr)) continue;
    // An error (the stream or its context gone) means nothing waits there any more.
    const CUresult r = wait.recorded ? event_query.get()(wait.passed) : stream_query.get()(wait.stream);
    if (r == CUDA_ERROR_NOT_READY) continue;
    wait.waiting = false;
    waiting_.fetch_sub(1, std::memory_order_acq_rel);
  }
  return entered_.load(std::memory_order_acquire) != 0 || waiting_.load(std::memory_order_acquire) != 0;
}

void ProgramValueWaits::forget() noexcept {
  std::lock_guard lock(mutex_);
  forgotten_ = true;
  waits_.clear();
  waiting_.store(0, std::memory_order_release);
}

}  // namespace deepum::cuda
