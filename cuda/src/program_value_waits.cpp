#include "deepum/cuda/program_value_waits.hpp"

#include <cuda.h>

#include "deepum/core/capture_gate.hpp"
#include "deepum/core/stream_id.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {

CUstream handle_of(std::uint64_t stream_id) {
  return reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(core::stream_handle(stream_id)));
}

enum class Capture { none, capturing, unknown };

// Whether `stream` is capturing into a graph, which would take in an event recorded there now.
Capture capture_of(CUstream stream) {
  // The legacy stream is never captured (and asking about it during another thread's capture in
  // the global mode is itself an error).
  if (stream == nullptr || stream == CU_STREAM_LEGACY) return Capture::none;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (stream_is_capturing.get() == nullptr || stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS)
    return Capture::unknown;
  return status == CU_STREAM_CAPTURE_STATUS_NONE ? Capture::none : Capture::capturing;
}

class DriverEvents final : public core::ValueWaits::EventOps {
 public:
  bool record(const core::ValueWaits::Stream& stream, void*& event) noexcept override {
    CUstream handle = handle_of(stream.id);
    // The legacy and per-thread handles name the current context's stream: it must be the wait's.
    CUcontext current = nullptr;
    if (ctx_get_current.get() == nullptr || ctx_get_current.get()(&current) != CUDA_SUCCESS ||
        reinterpret_cast<std::uintptr_t>(current) != stream.context)
      return false;
    if (event_create.get() == nullptr || event_record.get() == nullptr || capture_of(handle) != Capture::none)
      return false;
    auto* recorded = static_cast<CUevent>(event);
    if (recorded != nullptr && event_record.get()(recorded, handle) == CUDA_SUCCESS) return true;
    // None yet, or the driver refused this one: one made anew.
    if (recorded != nullptr && event_destroy.get() != nullptr) event_destroy.get()(recorded);
    event = nullptr;
    if (event_create.get()(&recorded, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) return false;
    event = recorded;
    return event_record.get()(recorded, handle) == CUDA_SUCCESS;
  }
  // An error (the context gone) means it can no longer fire: nothing waits for it.
  bool fired(void* event) noexcept override {
    return event_query.get() == nullptr ||
           event_query.get()(static_cast<CUevent>(event)) != CUDA_ERROR_NOT_READY;
  }
};

}  // namespace

core::ValueWaits& program_value_waits() {
  static DriverEvents* events = new DriverEvents;
  static core::ValueWaits* waits = new core::ValueWaits(*events);
  return *waits;
}

void program_value_wait_entered(std::uint64_t context, std::uint64_t stream_id) noexcept {
  // A failed query counts it: holding is safe, missing one is not.
  if (capture_of(handle_of(stream_id)) == Capture::capturing) return;
  program_value_waits().entered({context, stream_id});
}

void program_value_wait_enqueued() noexcept {
  if (!core::ValueWaits::entered_on_this_thread()) return;
  // While another thread captures in the global mode, recording in the legacy stream would end
  // its capture: the event is recorded later instead.
  const core::GateEntry gate;
  program_value_waits().enqueued(static_cast<bool>(gate));
}

}  // namespace deepum::cuda
