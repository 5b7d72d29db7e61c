#include "deepum/cuda/stream_ordered_evictor.hpp"

#include "deepum/core/log.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/driver_hint_executor.hpp"

namespace deepum::cuda {
using namespace driver;

std::string StreamOrderedEvictor::create() {
  if (stream_create.get() == nullptr || event_create.get() == nullptr || event_record.get() == nullptr ||
      stream_wait_event.get() == nullptr || stream_is_capturing.get() == nullptr ||
      event_query.get() == nullptr || prefetch_async.get() == nullptr) {
    return "the driver lacks cuMemPrefetchAsync or the event functions";
  }
  if (CUresult r = stream_create.get()(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  if (CUresult r = event_create.get()(&program_done_, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS)
    return describe("cuEventCreate", r);
  if (CUresult r = event_create.get()(&anchor_, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
    return describe("cuEventCreate", r);
  if (CUresult r = stream_create.get()(&anchor_stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    anchor_stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  for (std::size_t i = 0; i < kEvents; ++i) {
    CUevent event = nullptr;
    if (CUresult r = event_create.get()(&event, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
      return describe("cuEventCreate", r);
    free_events_.push_back(event);
  }
  return {};
}

void StreamOrderedEvictor::on_range_allocated(std::uint64_t address, std::uint64_t bytes) noexcept {
  std::lock_guard lock(mutex_);
  try {
    model_.on_range_allocated(address, bytes);
  } catch (const std::exception&) {
    // Out of memory for a map node: this range is not counted, nothing else is lost.
  }
}

void StreamOrderedEvictor::on_range_freed(std::uint64_t address) noexcept {
  std::lock_guard lock(mutex_);
  model_.on_range_freed(address);
}

void StreamOrderedEvictor::reap() {
  while (!in_flight_.empty() && event_query.get()(in_flight_.front().done) == CUDA_SUCCESS) {
    // When it finished: from the anchor on the GPU's clock; else (no anchor, or it finished
    // before the anchor) this poll, which is later than it finished.
    std::uint64_t time = last_poll_;
    float ms = 0;
    if (anchor_time_ != 0 && event_elapsed_time.get() != nullptr &&
        event_elapsed_time.get()(&ms, anchor_, in_flight_.front().done) == CUDA_SUCCESS && ms >= 0)
      time = anchor_time_ + static_cast<std::uint64_t>(static_cast<double>(ms) * 1e6);
    for (const core::AddressRange& range : in_flight_.front().ranges) finished_.emplace_back(range, time);
    free_events_.push_back(in_flight_.front().done);
    in_flight_.pop_front();
  }
}

std::vector<std::pair<core::AddressRange, std::uint64_t>> StreamOrderedEvictor::poll_finished(
    std::uint64_t now) {
  std::lock_guard lock(mutex_);
  if (anchor_time_ == 0 && anchor_stream_ != nullptr) {
    // Once, on the worker, once the caller's clock (CUPTI's) runs, on a stream of its own that
    // is idle (ours may hold evictions waiting for the program): the anchor completes within
    // microseconds of `now`.
    if (event_record.get()(anchor_, anchor_stream_) == CUDA_SUCCESS && event_synchronize.get() != nullptr &&
        event_synchronize.get()(anchor_) == CUDA_SUCCESS)
      anchor_time_ = now;
  }
  last_poll_ = now;
  reap();
  return std::exchange(finished_, {});
}

bool StreamOrderedEvictor::issue(CUstream stream, core::LaunchEviction& decision) {
  CUresult r = CUDA_SUCCESS;
  // The latest eviction, if it has not finished yet, is the one in flight.
  if (decision.wait_for_pending && !in_flight_.empty())
    r = stream_wait_event.get()(stream, in_flight_.back().done, 0);
  if (r == CUDA_SUCCESS && !decision.evict.empty()) {
    if (free_events_.empty()) reap();
    if (free_events_.empty()) {
      // Every event marks an eviction the GPU has not reached: the host is that far ahead.
      // Evicting nothing now; the next launches decide again.
      skipped_busy_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  }
  if (r == CUDA_SUCCESS && !decision.evict.empty()) {
    CUevent done = free_events_.back();
    CUmemLocation host{};
    host.type = CU_MEM_LOCATION_TYPE_HOST;
    r = event_record.get()(program_done_, stream);
    if (r == CUDA_SUCCESS) r = stream_wait_event.get()(stream_, program_done_, 0);
    // One call per range: each stays within one allocation, and the batched call refuses some
    // mixes of sizes; evictions come once per batch of the limit, so the calls are few.
    for (const core::AddressRange& range : decision.evict) {
      if (r != CUDA_SUCCESS) break;
      r = prefetch_async.get()(static_cast<CUdeviceptr>(range.address), range.bytes, host, 0, stream_);
    }
    if (r == CUDA_SUCCESS) r = event_record.get()(done, stream_);
    if (r == CUDA_SUCCESS) {
      free_events_.pop_back();
      in_flight_.push_back({done, decision.evict});
    }
    if (r == CUDA_SUCCESS && decision.wait_for_evict) r = stream_wait_event.get()(stream, done, 0);
  }
  if (r == CUDA_SUCCESS) return true;
  if (failures_.fetch_add(1, std::memory_order_relaxed) == 0) {
    core::logger().warn("an eviction before a launch failed ({}); later failures are only counted",
                        describe("", r));
  }
  return false;
}

template <typename Decide>
std::vector<core::AddressRange> StreamOrderedEvictor::before_operation(std::uint64_t stream_id,
                                                                       Decide&& decide) noexcept {
  auto* stream = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(stream_id));
  bool may_evict = stream_ != nullptr;
  // The legacy stream is never captured (and asking about it during another thread's global
  // capture would itself be an error).
  if (may_evict && stream != nullptr) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE) {
      skipped_capturing_.fetch_add(1, std::memory_order_relaxed);
      may_evict = false;
    }
  }
  std::lock_guard lock(mutex_);
  try {
    core::LaunchEviction decision = decide(model_, may_evict);
    if (!decision.wait_for_pending && decision.evict.empty()) return {};
    if (!issue(stream, decision)) {
      model_.eviction_failed(decision);
      return {};
    }
    return std::move(decision.evict);
  } catch (const std::exception&) {
    return {};  // out of memory for the victims' list: this operation evicts nothing
  }
}

std::vector<core::AddressRange> StreamOrderedEvictor::before_launch(
    const core::KernelLaunch& launch) noexcept {
  return before_operation(launch.stream, [&](core::LaunchOrderedResidency& model, bool may_evict) {
    return model.before_launch(launch, may_evict);
  });
}

std::vector<core::AddressRange> StreamOrderedEvictor::before_copy(const core::CopyLaunch& copy) noexcept {
  return before_operation(copy.stream, [&](core::LaunchOrderedResidency& model, bool may_evict) {
    return model.before_copy(copy, may_evict);
  });
}

core::LaunchOrderedStats StreamOrderedEvictor::stats() {
  std::lock_guard lock(mutex_);
  return model_.stats();
}

}  // namespace deepum::cuda
