#include "deepum/cuda/progress_markers.hpp"

#include <algorithm>

#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/driver_hint_executor.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {

thread_local std::uint32_t t_launches_since_marker = 0;

}  // namespace

std::string ProgressMarkers::create() {
  if (event_create.get() == nullptr || event_record.get() == nullptr || event_query.get() == nullptr ||
      stream_is_capturing.get() == nullptr) {
    return "the driver lacks the event functions";
  }
  std::vector<CUevent> events;
  for (std::size_t i = 0; i < kEvents; ++i) {
    CUevent event = nullptr;
    if (CUresult r = event_create.get()(&event, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS)
      return describe("cuEventCreate", r);
    events.push_back(event);
  }
  std::lock_guard lock(mutex_);
  free_events_ = std::move(events);
  ready_ = true;
  return {};
}

void ProgressMarkers::before_launch(std::uint64_t stream_id, std::uint64_t correlation_id) noexcept {
  if (++t_launches_since_marker < kLaunchesPerMarker) return;
  t_launches_since_marker = 0;
  auto* stream = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream_id));
  // A capture in progress makes any event record on the stream part of the graph. The legacy
  // stream is never captured, and asking about it during another thread's global-mode capture is
  // itself an error, so it is not asked about.
  if (stream != nullptr) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE) {
      skipped_capturing_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::lock_guard lock(mutex_);
  if (!ready_ || free_events_.empty()) return;  // the GPU is far behind: the markers queued suffice
  CUevent event = free_events_.back();
  if (event_record.get()(event, stream) != CUDA_SUCCESS) return;
  free_events_.pop_back();
  pending_.push_back({event, {stream_id, correlation_id}});
  recorded_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<StreamProgress> ProgressMarkers::poll() {
  std::vector<StreamProgress> done;
  std::lock_guard lock(mutex_);
  // Markers complete in order within a stream, across streams in any order: past the first
  // unfinished marker of a stream, that stream's later markers are not asked about.
  std::vector<std::uint64_t> unfinished_streams;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const std::uint64_t stream = it->progress.stream;
    if (std::find(unfinished_streams.begin(), unfinished_streams.end(), stream) != unfinished_streams.end()) {
      ++it;
      continue;
    }
    const CUresult r = event_query.get()(it->event);
    if (r == CUDA_ERROR_NOT_READY) {
      unfinished_streams.push_back(stream);
      ++it;
      continue;
    }
    // Completed, or failed (the context is going away): either way the marker is finished.
    if (r == CUDA_SUCCESS) done.push_back(it->progress);
    free_events_.push_back(it->event);
    it = pending_.erase(it);
  }
  return done;
}

}  // namespace deepum::cuda
