#include "deepum/cuda/stream_ordered_evictor.hpp"

#include <chrono>

#include "deepum/core/log.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/driver_hint_executor.hpp"

namespace deepum::cuda {
using namespace driver;

class StreamOrderedEvictor::EnqueueTimer {
 public:
  EnqueueTimer(StreamOrderedEvictor& evictor, Move kind)
      : total_(evictor.enqueue_ns_[static_cast<std::size_t>(kind)]),
        start_(std::chrono::steady_clock::now()) {}
  ~EnqueueTimer() {
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_);
    total_.fetch_add(static_cast<std::uint64_t>(ns.count()), std::memory_order_relaxed);
  }
  EnqueueTimer(const EnqueueTimer&) = delete;
  EnqueueTimer& operator=(const EnqueueTimer&) = delete;

 private:
  std::atomic<std::uint64_t>& total_;
  std::chrono::steady_clock::time_point start_;
};

std::string StreamOrderedEvictor::create() {
  if (stream_create.get() == nullptr || event_create.get() == nullptr || event_record.get() == nullptr ||
      stream_wait_event.get() == nullptr || stream_is_capturing.get() == nullptr ||
      event_query.get() == nullptr || prefetch_async.get() == nullptr || ctx_get_device.get() == nullptr) {
    return "the driver lacks cuMemPrefetchAsync or the event functions";
  }
  if (CUresult r = ctx_get_device.get()(&device_); r != CUDA_SUCCESS) return describe("cuCtxGetDevice", r);
  if (CUresult r = stream_create.get()(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  if (CUresult r = event_create.get()(&program_done_, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS)
    return describe("cuEventCreate", r);
  if (CUresult r = event_create.get()(&anchor_, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
    return describe("cuEventCreate", r);
  if (CUresult r = stream_create.get()(&fetch_stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    fetch_stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  if (CUresult r = stream_create.get()(&discard_stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    discard_stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  if (CUresult r = stream_create.get()(&anchor_stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    anchor_stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  for (std::size_t i = 0; i < kEvents; ++i) {
    CUevent event = nullptr;
    if (CUresult r = event_create.get()(&event, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
      return describe("cuEventCreate", r);
    free_events_.push_back(event);
    ++events_created_;
  }
  if (wants_eviction_thread_) {
    auto thread = std::make_unique<EvictionThread>();
    if (const std::string error = thread->start(); !error.empty()) {
      core::logger().warn("no eviction thread ({}): evictions are issued in the program's threads", error);
    } else {
      eviction_thread_ = std::move(thread);
    }
  }
  return {};
}

void StreamOrderedEvictor::stop() {
  // Not under mutex_: nothing the thread does needs it.
  if (eviction_thread_) eviction_thread_->stop();
}

bool StreamOrderedEvictor::finished(const InFlight& move) const {
  if (move.handed_over != 0 && !eviction_thread_->issued(move.handed_over)) return false;
  return event_query.get()(move.done) == CUDA_SUCCESS;
}

CUresult StreamOrderedEvictor::wait_in_stream(CUstream stream, EvictionRef eviction) {
  // The thread takes no lock of ours, so waiting for it under mutex_ cannot deadlock.
  if (eviction.handed_over != 0) eviction_thread_->wait_issued(eviction.handed_over);
  return stream_wait_event.get()(stream, eviction.done, 0);
}

void StreamOrderedEvictor::wait_on_host(EvictionRef eviction) {
  if (eviction.handed_over != 0) eviction_thread_->wait_issued(eviction.handed_over);
  if (event_synchronize.get() != nullptr) event_synchronize.get()(eviction.done);
}

CUevent StreamOrderedEvictor::take_event() {
  if (free_events_.empty()) reap();
  if (free_events_.empty() && events_created_ < kMaxEvents) {
    CUevent event = nullptr;
    if (event_create.get()(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) return nullptr;
    ++events_created_;
    return event;
  }
  if (free_events_.empty()) return nullptr;
  CUevent event = free_events_.back();
  free_events_.pop_back();
  return event;
}

CUevent StreamOrderedEvictor::take_event_or_count_busy() {
  CUevent event = take_event();
  if (event == nullptr) skipped_busy_.fetch_add(1, std::memory_order_relaxed);
  return event;
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

void StreamOrderedEvictor::on_buffer_returned(std::uint64_t address, std::uint64_t bytes,
                                              std::uint64_t stream) noexcept {
  if (!follows_buffers_) return;
  std::lock_guard lock(mutex_);
  model_.on_buffer_returned(address, bytes, stream);
}

void StreamOrderedEvictor::on_buffer_handed_out(std::uint64_t address, std::uint64_t bytes) noexcept {
  if (!follows_buffers_) return;
  std::lock_guard lock(mutex_);
  model_.on_buffer_handed_out(address, bytes);
}

void StreamOrderedEvictor::reap() {
  if (eviction_thread_) {
    // What the driver refused on the thread stayed resident.
    for (EvictionThread::Failed& failed : eviction_thread_->take_failed()) {
      core::LaunchEviction refused;
      refused.evict = std::move(failed.ranges);
      refused.wait_for_evict = failed.waited;  // else one alongside the program: its room was counted pending
      for (const InFlight& move : in_flight_) {
        if (move.kind == Move::eviction && move.handed_over == failed.number)
          refused.eviction_number = move.number;
      }
      model_.eviction_failed(refused);
    }
  }
  while (!in_flight_.empty() && finished(in_flight_.front())) {
    const InFlight& move = in_flight_.front();
    // When it finished: from the anchor on the GPU's clock; else (no anchor, or it finished
    // before the anchor) this poll, which is later than it finished.
    std::uint64_t end = last_poll_;
    float ms = 0;
    if (anchor_time_ != 0 && event_elapsed_time.get() != nullptr &&
        event_elapsed_time.get()(&ms, anchor_, move.done) == CUDA_SUCCESS && ms >= 0)
      end = anchor_time_ + static_cast<std::uint64_t>(static_cast<double>(ms) * 1e6);
    // The prefetch stream runs one prefetch at a time: one started no earlier than it was enqueued,
    // the one before it finished, and the eviction it waited for finished (reaped before it: our
    // moves are reaped in the order issued).
    std::uint64_t start = end;
    if (move.kind == Move::prefetch || move.kind == Move::placement) {
      // A placement runs on the discard stream, after the discards and placements before it.
      const bool placement = move.kind == Move::placement;
      std::uint64_t& previous_end = placement ? last_placement_end_ : last_prefetch_end_;
      std::uint64_t earliest = std::max(move.enqueued, previous_end);
      if (move.waited_eviction != 0) earliest = std::max(earliest, eviction_ends_[move.waited_eviction - 1]);
      if (move.after_discard) earliest = std::max(earliest, last_discard_end_);
      start = std::min(end, earliest);
      previous_end = std::max(previous_end, end);
    } else if (move.kind == Move::eviction) {
      eviction_ends_ = {end, eviction_ends_[0]};
    } else {
      last_discard_end_ = std::max(last_discard_end_, end);
      last_placement_end_ = std::max(last_placement_end_, end);  // the discard stream's FIFO
    }
    if (move.kind == Move::placement) placements_reaped_ = std::max(placements_reaped_, move.number);
    const bool to_gpu = move.kind == Move::prefetch || move.kind == Move::placement;
    for (const core::AddressRange& range : move.ranges) finished_.push_back({range, to_gpu, start, end});
    free_events_.push_back(move.done);
    if (move.ready != nullptr) free_events_.push_back(move.ready);
    in_flight_.pop_front();
  }
}

std::vector<StreamOrderedEvictor::Finished> StreamOrderedEvictor::poll_finished(std::uint64_t now) {
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

void StreamOrderedEvictor::mark_progress(CUstream stream, std::uint64_t launch) {
  MarkerRing* ring = nullptr;
  for (MarkerRing& candidate : markers_) {
    if (candidate.stream == stream) ring = &candidate;
  }
  if (ring == nullptr) {
    if (markers_.size() == kMarkerStreams) return;
    MarkerRing fresh;
    fresh.stream = stream;
    for (CUevent& event : fresh.events) {
      if (event_create.get()(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
        event = nullptr;
        return;  // the events made so far are kept for nothing: a few, once per stream at most
      }
    }
    markers_.push_back(fresh);
    ring = &markers_.back();
  }
  if (ring->launches++ % kMarkerInterval != 0) return;
  // Re-recording an event leaves earlier waits on it as they were: they keep its earlier state.
  if (event_record.get()(ring->events[ring->next], stream) != CUDA_SUCCESS) return;
  ring->recorded_before[ring->next] = launch;
  ring->next = (ring->next + 1) % kMarkers;
  ring->count = std::min(ring->count + 1, kMarkers);
}

CUevent StreamOrderedEvictor::marker_after(CUstream stream, std::uint64_t launch) const {
  for (const MarkerRing& ring : markers_) {
    if (ring.stream != stream) continue;
    // Oldest first: the first recorded after `launch` was enqueued.
    for (std::size_t i = 0; i < ring.count; ++i) {
      const std::size_t slot = (ring.next + kMarkers - ring.count + i) % kMarkers;
      if (ring.recorded_before[slot] > launch) return ring.events[slot];
    }
  }
  return nullptr;
}

CUevent StreamOrderedEvictor::placement_in_flight(std::uint64_t number, bool every) const {
  for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
    if (it->kind == Move::placement && (every || it->number == number)) return it->done;
  }
  return nullptr;  // finished (reaped) already, or none
}

StreamOrderedEvictor::EvictionRef StreamOrderedEvictor::eviction_up_to(std::uint64_t number) const {
  // Evictions run one after another on one stream: the latest up to `number` ends after the rest.
  for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
    if (it->kind == Move::eviction && it->number <= number) return {it->done, it->handed_over};
  }
  return {};  // finished (reaped) already
}

bool StreamOrderedEvictor::issue(CUstream stream, core::LaunchEviction& decision, std::uint64_t host_time,
                                 std::vector<core::AddressRange>& discarded) {
  // The room the eviction in flight makes is needed now, unless it has finished already: the
  // model counts that room free from here on, so the launch waits for it whatever follows (on the
  // host, if the driver refuses the stream wait).
  const EvictionRef pending =
      decision.wait_for_eviction != 0 ? eviction_up_to(decision.wait_for_eviction) : EvictionRef{};
  if (pending) {
    if (CUresult r = wait_in_stream(stream, pending); r != CUDA_SUCCESS) {
      wait_on_host(pending);
      return count_failure(r);
    }
  }
  // An event for each move, taken first: when the host is kMaxEvents moves ahead of the GPU,
  // nothing is enqueued now and the next launches decide again.
  CUevent dropped = decision.discard.empty() ? nullptr : take_event();
  CUevent done = decision.evict.empty() ? nullptr : take_event();
  // With an eviction thread every eviction goes there, after an event of its own.
  const bool to_thread = eviction_thread_ && !decision.evict.empty();
  CUevent ready = to_thread ? take_event() : nullptr;
  if ((!decision.discard.empty() && dropped == nullptr) ||
      (!decision.evict.empty() && (done == nullptr || (to_thread && ready == nullptr)))) {
    for (CUevent event : {dropped, done, ready}) {
      if (event != nullptr) free_events_.push_back(event);
    }
    skipped_busy_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  CUresult r = CUDA_SUCCESS;
  if (dropped != nullptr) {
    EnqueueTimer timer(*this, Move::discard);
    // After the program's work so far in the launch's stream: every user of the dead blocks,
    // named or not. Dropped (and placed on the host, unless discard_in_place_) in one call,
    // nothing copied, on the discard stream: not behind evictions, but behind any placement there
    // (which may wait for one).
    r = event_record.get()(program_done_, stream);
    if (r == CUDA_SUCCESS) r = stream_wait_event.get()(discard_stream_, program_done_, 0);
    if (r == CUDA_SUCCESS) {
      // Where the driver lacks the in-place discard, dropped and placed on the host instead.
      r = discard_in_place_ && discard_batch.get() != nullptr
              ? discard_where_they_are(decision.discard, discard_stream_)
              : discard_and_prefetch_to(decision.discard, host, discard_stream_);
    }
    if (r == CUDA_SUCCESS) {
      // Queued: nothing the program enqueues later may run beside it (a block handed out again
      // would lose what is written into it), so the launch waits for it, or else the host does.
      discarded = std::exchange(decision.discard, {});
      r = event_record.get()(dropped, discard_stream_);
      if (r == CUDA_SUCCESS) {
        in_flight_.push_back({dropped, discarded, Move::discard, host_time});
        r = stream_wait_event.get()(stream, dropped, 0);
      } else {
        free_events_.push_back(std::exchange(dropped, nullptr));
      }
      if (r != CUDA_SUCCESS && stream_synchronize.get() != nullptr) stream_synchronize.get()(discard_stream_);
    } else {
      free_events_.push_back(std::exchange(dropped, nullptr));
    }
  }
  EvictionRef evicted;  // waited for by the launch
  if (r == CUDA_SUCCESS && done != nullptr) {
    EnqueueTimer timer(*this, Move::eviction);
    // After the victims' last users where a marker shows them run, else after everything so far.
    CUevent after = marker_after(stream, decision.evict_after_launch);
    if (after != nullptr) {
      evictions_after_marker_.fetch_add(1, std::memory_order_relaxed);
    } else {
      after = program_done_;
      if (dropped == nullptr) r = event_record.get()(program_done_, stream);
    }
    if (r == CUDA_SUCCESS) {
      if (!issue_eviction(stream, decision, host_time, after, done, ready, evicted)) return false;
    } else {
      for (CUevent event : {done, ready}) {
        if (event != nullptr) free_events_.push_back(event);
      }
    }
  }
  if (r != CUDA_SUCCESS) return count_failure(r);
  // The eviction the prefetch's room comes from finishes last among those it waits for: this
  // launch's, else the one in flight (waited for, or holding blocks the prefetch brings back).
  EvictionRef in_flight = pending;
  if (!in_flight && decision.fetch_waits_for_eviction != 0)
    in_flight = eviction_up_to(decision.fetch_waits_for_eviction);
  const bool evicted_alongside = !decision.evict.empty() && !evicted;
  const std::uint8_t waited_eviction = evicted ? 1 : in_flight ? (evicted_alongside ? 2 : 1) : 0;
  if (!decision.place.empty())
    issue_placement(stream, decision, host_time, {in_flight, evicted}, waited_eviction);
  if (!decision.fetch.empty() &&
      !issue_prefetch(stream, decision, host_time, {in_flight, evicted}, dropped, waited_eviction))
    decision.fetch.clear();
  return true;
}

bool StreamOrderedEvictor::count_failure(CUresult r) {
  if (failures_.fetch_add(1, std::memory_order_relaxed) == 0) {
    core::logger().warn("an eviction before a launch failed ({}); later failures are only counted",
                        describe("", r));
  }
  return false;
}

bool StreamOrderedEvictor::issue_eviction(CUstream stream, core::LaunchEviction& decision,
                                          std::uint64_t host_time, CUevent after, CUevent done, CUevent ready,
                                          EvictionRef& evicted) {
  const auto give_back = [this, done, ready](CUresult r) {
    for (CUevent event : {done, ready}) {
      if (event != nullptr) free_events_.push_back(event);
    }
    return count_failure(r);
  };
  CUresult r = stream_wait_event.get()(stream_, after, 0);
  if (ready != nullptr) {
    // Our stream relays `after` into an event of the eviction's own: markers and program_done_ are
    // recorded again by later launches, perhaps before the thread gets to it.
    if (r == CUDA_SUCCESS) r = event_record.get()(ready, stream_);
    if (r != CUDA_SUCCESS) return give_back(r);
    const std::uint32_t number =
        eviction_thread_->hand_over(ready, done, decision.evict, decision.wait_for_evict);
    in_flight_.push_back(
        {done, decision.evict, Move::eviction, host_time, 0, false, decision.eviction_number, number, ready});
    if (decision.wait_for_evict) {
      // Handed over, it happens: where the launch's stream cannot wait for it, the host does.
      evicted = {done, number};
      if (wait_in_stream(stream, evicted) != CUDA_SUCCESS) wait_on_host(evicted);
    }
    return true;
  }
  // One call per range: each stays within one allocation, and the batched call refuses some
  // mixes of sizes; evictions come once per batch of the limit, so the calls are few.
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  for (const core::AddressRange& range : decision.evict) {
    if (r != CUDA_SUCCESS) break;
    r = prefetch_async.get()(static_cast<CUdeviceptr>(range.address), range.bytes, host, 0, stream_);
  }
  if (r == CUDA_SUCCESS) r = event_record.get()(done, stream_);
  if (r != CUDA_SUCCESS) return give_back(r);
  in_flight_.push_back({done, decision.evict, Move::eviction, host_time, 0, false, decision.eviction_number});
  if (decision.wait_for_evict) {
    // Enqueued, it happens: where the launch's stream cannot wait for it, the host does.
    evicted = {done, 0};
    if (wait_in_stream(stream, evicted) != CUDA_SUCCESS) wait_on_host(evicted);
  }
  return true;
}

void StreamOrderedEvictor::issue_placement(CUstream stream, core::LaunchEviction& decision,
                                           std::uint64_t host_time, std::array<EvictionRef, 2> room,
                                           std::uint8_t waited_eviction) {
  CUevent placed = take_event_or_count_busy();
  if (placed == nullptr) {
    decision.place.clear();
    return;
  }
  EnqueueTimer timer(*this, Move::placement);
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device_;
  // After the launch stream's work so far: PyTorch hands a block freed on a stream out again on
  // that stream at once, so its earlier users there may not have run yet, and dropping contents
  // under a running kernel is undefined.
  CUresult r = event_record.get()(program_done_, stream);
  if (r == CUDA_SUCCESS) r = stream_wait_event.get()(discard_stream_, program_done_, 0);
  for (EvictionRef eviction : room) {
    if (eviction && r == CUDA_SUCCESS) r = wait_in_stream(discard_stream_, eviction);
  }
  // The eviction that moved a placed block out may still run (waited for by a launch in another
  // stream, or by none yet): dropping pages under it is undefined.
  for (const InFlight& move : in_flight_) {
    if (move.kind == Move::eviction && move.number == decision.place_after_eviction &&
        decision.place_after_eviction != 0 && r == CUDA_SUCCESS)
      r = wait_in_stream(discard_stream_, {move.done, move.handed_over});
  }
  if (r == CUDA_SUCCESS) r = discard_and_prefetch_to(decision.place, gpu, discard_stream_);
  if (r != CUDA_SUCCESS) {
    // Nothing enqueued: the launch faults the blocks in (their stale contents copied, as before).
    free_events_.push_back(placed);
    decision.place.clear();
    if (prefetch_failures_.fetch_add(1, std::memory_order_relaxed) == 0)
      core::logger().warn("placing fresh memory before a launch failed ({}); later failures are only counted",
                          describe("", r));
    return;
  }
  // Enqueued: the launch must not run beside it (what it writes would be dropped); the host waits
  // if the stream cannot.
  r = event_record.get()(placed, discard_stream_);
  if (r == CUDA_SUCCESS) {
    in_flight_.push_back({placed, decision.place, Move::placement, host_time, waited_eviction, false,
                          decision.placement_number});
    r = stream_wait_event.get()(stream, placed, 0);
  } else {
    free_events_.push_back(placed);
  }
  if (r != CUDA_SUCCESS && stream_synchronize.get() != nullptr) stream_synchronize.get()(discard_stream_);
}

CUresult StreamOrderedEvictor::discard_and_prefetch_to(const std::vector<core::AddressRange>& ranges,
                                                       CUmemLocation location, CUstream on) {
  if (discard_and_prefetch.get() == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  BatchRanges batch(ranges);
  size_t location_index = 0;  // every range to the one location
  return discard_and_prefetch.get()(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(),
                                    &location, &location_index, 1, 0, on);
}

CUresult StreamOrderedEvictor::discard_where_they_are(const std::vector<core::AddressRange>& ranges,
                                                      CUstream on) {
  if (discard_batch.get() == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  BatchRanges batch(ranges);
  return discard_batch.get()(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(), 0, on);
}

bool StreamOrderedEvictor::issue_prefetch(CUstream stream, core::LaunchEviction& decision,
                                          std::uint64_t host_time, std::array<EvictionRef, 2> room,
                                          CUevent dropped, std::uint8_t waited_eviction) {
  CUevent arrived = take_event_or_count_busy();
  if (arrived == nullptr) return false;
  EnqueueTimer timer(*this, Move::prefetch);
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device_;
  CUresult r = CUDA_SUCCESS;
  // Into the room the launch waits for; what fits already goes at once, ahead of the GPU.
  for (EvictionRef eviction : room) {
    if (eviction && r == CUDA_SUCCESS) r = wait_in_stream(fetch_stream_, eviction);
  }
  if (dropped != nullptr && r == CUDA_SUCCESS) r = stream_wait_event.get()(fetch_stream_, dropped, 0);
  std::size_t issued = 0;
  for (const core::AddressRange& range : decision.fetch) {
    if (r != CUDA_SUCCESS) break;
    r = prefetch_async.get()(static_cast<CUdeviceptr>(range.address), range.bytes, gpu, 0, fetch_stream_);
    if (r == CUDA_SUCCESS) ++issued;
  }
  decision.fetch.resize(issued);  // what is on its way; the launch faults the rest in
  CUresult recorded = issued != 0 ? event_record.get()(arrived, fetch_stream_) : CUDA_ERROR_NOT_READY;
  if (recorded == CUDA_SUCCESS) {
    in_flight_.push_back(
        {arrived, decision.fetch, Move::prefetch, host_time, waited_eviction, dropped != nullptr});
    if (CUresult w = stream_wait_event.get()(stream, arrived, 0); w != CUDA_SUCCESS && r == CUDA_SUCCESS)
      r = w;
  } else {
    free_events_.push_back(arrived);
    decision.fetch.clear();  // not tracked: counted as faulted in by the launch
    if (issued != 0 && r == CUDA_SUCCESS) r = recorded;
  }
  if (r != CUDA_SUCCESS && prefetch_failures_.fetch_add(1, std::memory_order_relaxed) == 0) {
    core::logger().warn(
        "a prefetch before a launch failed ({}); the launch faults its memory in; later "
        "failures are only counted",
        describe("", r));
  }
  return !decision.fetch.empty();
}

template <typename Decide>
StreamOrderedEvictor::Moves StreamOrderedEvictor::before_operation(std::uint64_t stream_id,
                                                                   std::uint64_t host_time,
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
    // A placement is ordered before the launch that asked for it only: an operation in another
    // stream naming the same blocks, or one that may reach memory it does not name, waits for it
    // (the host waits where the stream cannot: a stream being captured takes no foreign event).
    // (Placements are numbered in issue order and reaped in it: one reaped is done.)
    if (decision.after_placement > placements_reaped_ || decision.after_every_placement) {
      if (CUevent placed = placement_in_flight(decision.after_placement, decision.after_every_placement)) {
        if (!may_evict || stream_wait_event.get()(stream, placed, 0) != CUDA_SUCCESS) {
          if (event_synchronize.get() != nullptr) event_synchronize.get()(placed);
        }
      }
    }
    // Before the waits this launch may get: a marker shows only the program's own progress.
    if (may_evict) mark_progress(stream, model_.launches_decided());
    if (decision.wait_for_eviction == 0 && decision.evict.empty() && decision.discard.empty() &&
        decision.fetch.empty() && decision.place.empty())
      return {};
    std::vector<core::AddressRange> discarded;
    if (!issue(stream, decision, host_time, discarded)) {
      model_.eviction_failed(decision);  // what was not enqueued
      return {{}, std::move(discarded), {}};
    }
    // The live estimate counts placements as prefetches: both make blocks resident.
    decision.fetch.insert(decision.fetch.end(), decision.place.begin(), decision.place.end());
    return {std::move(decision.evict), std::move(discarded), std::move(decision.fetch)};
  } catch (const std::exception&) {
    // Out of memory for the victims' list: this operation evicts nothing, and blocks it named in
    // part may still count as fresh, so none does.
    model_.forget_fresh();
    return {};
  }
}

StreamOrderedEvictor::Moves StreamOrderedEvictor::before_launch(const core::KernelLaunch& launch) noexcept {
  return before_operation(launch.stream, launch.host_time,
                          [&](core::LaunchOrderedResidency& model, bool may_evict) {
                            return model.before_launch(launch, may_evict);
                          });
}

StreamOrderedEvictor::Moves StreamOrderedEvictor::before_copy(const core::CopyLaunch& copy) noexcept {
  return before_operation(copy.stream, copy.host_time,
                          [&](core::LaunchOrderedResidency& model, bool may_evict) {
                            return model.before_copy(copy, may_evict);
                          });
}

void StreamOrderedEvictor::stop_placing() noexcept {
  std::lock_guard lock(mutex_);
  places_fresh_.store(false, std::memory_order_relaxed);
  discard_in_place_ = false;
  model_.stop_placing();
}

void StreamOrderedEvictor::forget_fresh() noexcept {
  if (!places_fresh_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(mutex_);
  model_.forget_fresh();
  if (CUevent placed = placement_in_flight(0, true); placed != nullptr && event_synchronize.get() != nullptr)
    event_synchronize.get()(placed);
}

core::LaunchOrderedStats StreamOrderedEvictor::stats() {
  std::lock_guard lock(mutex_);
  return model_.stats();
}

}  // namespace deepum::cuda
