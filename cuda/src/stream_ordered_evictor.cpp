#include "deepum/cuda/stream_ordered_evictor.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <iterator>
#include <string>

#include "deepum/core/capture_gate.hpp"
#include "deepum/core/elapsed.hpp"
#include "deepum/core/log.hpp"
#include "deepum/core/stream_id.hpp"
#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/move_ranges.hpp"
#include "deepum/cuda/own_moves.hpp"
#include "deepum/cuda/program_value_waits.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {
using core::ns_since;

// Calls `each(block_address, bytes)` for every 2 MB block of `ranges` (swapped blocks are whole).
template <typename Each>
void for_each_block(const std::vector<core::AddressRange>& ranges, Each&& each) {
  for (const core::AddressRange& range : ranges) {
    for (std::uint64_t at = range.address; at < range.address + range.bytes; at += core::kBlockBytes)
      each(at, std::min(core::kBlockBytes, range.address + range.bytes - at));
  }
}

// Whether any of `ranges` overlaps [address, address + bytes).
bool overlaps(const std::vector<core::AddressRange>& ranges, std::uint64_t address, std::uint64_t bytes) {
  return std::any_of(ranges.begin(), ranges.end(), [&](const core::AddressRange& range) {
    return range.address < address + bytes && address < range.address + range.bytes;
  });
}

// " 0x7f00+2048K 0x7f20+4096K": ranges for the move log.
std::string describe_ranges(const std::vector<core::AddressRange>& ranges) {
  std::string text;
  for (const core::AddressRange& range : ranges)
    fmt::format_to(std::back_inserter(text), " {:#x}+{}K", range.address, range.bytes >> 10);
  return text;
}
}  // namespace

class StreamOrderedEvictor::EnqueueTimer {
 public:
  EnqueueTimer(StreamOrderedEvictor& evictor, Move kind)
      : total_(evictor.enqueue_ns_[static_cast<std::size_t>(kind)]),
        start_(std::chrono::steady_clock::now()),
        range_(range_kind(kind)) {}
  ~EnqueueTimer() { total_.fetch_add(ns_since(start_), std::memory_order_relaxed); }
  EnqueueTimer(const EnqueueTimer&) = delete;
  EnqueueTimer& operator=(const EnqueueTimer&) = delete;

 private:
  static MoveRangeKind range_kind(Move kind) {
    switch (kind) {
      case Move::eviction:
        return MoveRangeKind::eviction;
      case Move::discard:
        return MoveRangeKind::discard;
      case Move::prefetch:
        return MoveRangeKind::prefetch;
      case Move::placement:
        return MoveRangeKind::placement;
    }
    return MoveRangeKind::eviction;
  }

  std::atomic<std::uint64_t>& total_;
  std::chrono::steady_clock::time_point start_;
  MoveRange range_;  // the same span in Nsight Systems
};

std::string StreamOrderedEvictor::create() {
  start_move_ranges();  // here, on the program's thread outside any CUPTI callback, before any move
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
  CUstream host_place = nullptr;  // none: the host copies back into blocks it faults in one by one
  if (swaps_ && stream_create.get()(&host_place, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS)
    host_place_stream_.store(host_place);
  if (swaps_ && !restore_staging_.allocate(/*with_kernel=*/true))
    core::logger().warn(
        "no device memory for the copies back from the swap store to pass through: they "
        "take turns with the copies out");
  if (stream_create.get()(&drop_stream_, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
    drop_stream_ = discard_stream_;
  // A stream and a buffer of their own, else behind the discard stream's placements as well.
  restore_stream_ = discard_stream_;
  CUstream restores = nullptr;
  if (swaps_ && restore_staging_.buffer() != 0 && ahead_staging_.allocate(/*with_kernel=*/true) &&
      stream_create.get()(&restores, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS)
    restore_stream_ = restores;
  for (std::size_t i = 0; i < kEvents; ++i) {
    CUevent event = nullptr;
    if (CUresult r = event_create.get()(&event, CU_EVENT_DEFAULT); r != CUDA_SUCCESS)
      return describe("cuEventCreate", r);
    free_events_.push_back(event);
    ++events_created_;
  }
  if (swaps_) {
    if (memcpy_async.get() == nullptr || discard_batch.get() == nullptr ||
        discard_and_prefetch.get() == nullptr) {
      return "swaps (mode fast) need cuMemcpyAsync, cuMemDiscardBatchAsync and "
             "cuMemDiscardAndPrefetchBatchAsync";
    }
    store_ = std::make_unique<HostSwapStore>(swap_store_bytes_);
    // A block another stream named is swapped once a marker there shows its users enqueued (asked
    // under mutex_, while deciding).
    model_.set_stream_follower([this](std::uint64_t stream, std::uint64_t operation) {
      return marker_after_id(stream, operation) != nullptr;
    });
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

void StreamOrderedEvictor::abandon_context() {
  if (eviction_thread_) eviction_thread_->abandon();
  std::lock_guard lock(mutex_);
  stopped_ = true;
  forget_context_handles();
}

void StreamOrderedEvictor::forget_context_handles() {
  // Every stream and event of ours in the context is going away: none may be touched again (a
  // destroyed handle is not always an error the driver returns; it can be a crash).
  in_flight_.clear();
  free_events_.clear();
  markers_.clear();
  releases_.clear();
  restore_staging_.forget();
  ahead_staging_.forget();
  host_place_stream_.store(nullptr);
}

void StreamOrderedEvictor::stop(bool contents_lost) {
  // Not under mutex_: nothing the thread does needs it. Later hand-overs are refused, and issued
  // by the caller itself.
  if (eviction_thread_) eviction_thread_->stop(/*discard_pending=*/contents_lost);
  HostWork work;
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
    OwnMovesScope issuing;
    try {
      if (!contents_lost) copy_back_on_host(model_.unswap_all(), work);
    } catch (const std::exception&) {
      // Out of memory for the list: nothing was unmarked (unswap_all builds it first).
    }
    if (contents_lost) forget_context_handles();
  }
  run(work);
}

std::unique_lock<std::mutex> StreamOrderedEvictor::lock_settled() {
  std::unique_lock lock(mutex_);
  if (stopped_) {
    lock.unlock();
  } else {
    restores_done_.wait(lock, [this] { return host_restores_ == 0; });
  }
  return lock;
}

void StreamOrderedEvictor::restore_before_capture() noexcept {
  HostWork work;
  {
    const std::unique_lock lock = lock_settled();
    if (!lock.owns_lock()) return;
    OwnMovesScope issuing;
    try {
      copy_back_on_host(model_.unswap_all(), work);
      // And every move in flight done: none can be waited for while the capture runs.
      for (const InFlight& move : in_flight_) work.host_waits.push_back({move.done, move.handed_over});
    } catch (const std::exception&) {
      // Out of memory for the lists: what was listed is waited for; the rest is waited for by the
      // operations that name it.
    }
  }
  run(work);
}

void StreamOrderedEvictor::grow_swap_store() noexcept {
  // Chunks until 50 ms have gone by (a chunk takes 10-100 ms): the worker has other work.
  const auto round = std::chrono::steady_clock::now();
  while (ns_since(round) < 50'000'000) {
    std::uint64_t bytes = 0;
    {
      std::lock_guard lock(mutex_);
      if (!store_ || stopped_) return;
      bytes = store_->next_chunk_bytes(swap_reserve_bytes_, model_.peak_bytes_over_limit());
    }
    if (bytes == 0) return;
    core::GateEntry entry;  // pinning while a stream capture runs may invalidate it
    if (!entry) return;
    std::string error;
    const auto pinning = std::chrono::steady_clock::now();
    const HostSwapStore::Chunk chunk = HostSwapStore::pin_chunk(bytes, error);
    swap_store_pin_ns_.fetch_add(ns_since(pinning), std::memory_order_relaxed);
    std::lock_guard lock(mutex_);
    if (chunk.pointer == nullptr) {
      store_->pin_failed(std::move(error));
      return;
    }
    try {
      store_->add_chunk(chunk);
    } catch (const std::exception&) {
      HostSwapStore::unpin(chunk);
      store_->pin_failed("out of memory for the swap store's slots");
      return;
    }
  }
}

bool StreamOrderedEvictor::finished(const InFlight& move) const {
  if (move.handed_over != 0 && !eviction_thread_->issued(move.handed_over)) return false;
  return event_query.get()(move.done) == CUDA_SUCCESS;
}

void StreamOrderedEvictor::note_ended_evictions() {
  for (std::uint64_t number = model_.oldest_pending_eviction(); number != 0;
       number = model_.oldest_pending_eviction()) {
    if (const EvictionRef eviction = eviction_up_to(number)) {
      if (eviction.handed_over != 0 && !eviction_thread_->issued(eviction.handed_over)) return;
      if (event_query.get()(eviction.done) != CUDA_SUCCESS) return;
    }
    model_.evictions_ended(number);
  }
}

CUresult StreamOrderedEvictor::wait_in_program_stream(CUstream stream, EvictionRef eviction, HostWork& work) {
  const bool issued = eviction.handed_over == 0 || eviction_thread_->issued(eviction.handed_over);
  if (!issued) {
    work.stream_waits.push_back({stream, eviction});
    return CUDA_SUCCESS;
  }
  const CUresult r = stream_wait_event.get()(stream, eviction.done, 0);
  if (r != CUDA_SUCCESS) work.host_waits.push_back(eviction);  // the launch must not run before it
  return r;
}

CUresult StreamOrderedEvictor::wait_in_own_stream(CUstream ours, EvictionRef eviction) {
  // The one wait under mutex_ (see the header): the thread takes no lock of ours.
  if (eviction.handed_over != 0) eviction_thread_->wait_issued(eviction.handed_over);
  return stream_wait_event.get()(ours, eviction.done, 0);
}

void StreamOrderedEvictor::run(HostWork& work) {
  if (work.empty()) return;
  const auto wait_issued = [this](EvictionRef eviction) {
    if (eviction.handed_over != 0) eviction_thread_->wait_issued(eviction.handed_over);
  };
  const auto synchronize = [](CUevent event) {
    if (event_synchronize.get() != nullptr) event_synchronize.get()(event);
  };
  for (const HostWork::StreamWait& wait : work.stream_waits) {
    wait_issued(wait.eviction);
    if (stream_wait_event.get()(wait.stream, wait.eviction.done, 0) != CUDA_SUCCESS)
      synchronize(wait.eviction.done);
  }
  for (EvictionRef eviction : work.host_waits) {
    wait_issued(eviction);
    synchronize(eviction.done);
  }
  for (CUstream stream : work.stream_syncs) {
    if (stream_synchronize.get() != nullptr) stream_synchronize.get()(stream);
  }
  if (!work.copies.empty()) {
    const MoveRange shown(MoveRangeKind::host_copy_back);  // in Nsight Systems
    const auto start = std::chrono::steady_clock::now();
    // The copies out (and any move naming these blocks) finish first.
    for (EvictionRef move : work.before_copies) {
      wait_issued(move);
      synchronize(move.done);
    }
    place_on_host(work.copies);
    // Managed memory is the host's to write: each page takes the contents where it now is.
    for (const BlockCopy& copy : work.copies)
      std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(copy.block)), copy.slot, copy.bytes);
    host_copy_back_ns_.fetch_add(ns_since(start), std::memory_order_relaxed);
  }
  std::lock_guard lock(mutex_);
  for (const BlockCopy& copy : work.copies) store_->give_back(copy.slot);
  for (void* slot : work.slots_to_free) store_->give_back(slot);
  if (!work.copies.empty() && --host_restores_ == 0) restores_done_.notify_all();
  reap();
}

void StreamOrderedEvictor::place_on_host(const std::vector<BlockCopy>& copies) {
  CUstream on = host_place_stream_.load();
  if (on == nullptr || copies.empty()) return;
  std::vector<core::AddressRange> blocks;
  blocks.reserve(copies.size());
  for (const BlockCopy& copy : copies) blocks.push_back({copy.block, copy.bytes});
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  // A failure leaves the pages where they are: the host faults them in as it writes.
  if (discard_and_prefetch_to(blocks, host, on) == CUDA_SUCCESS && stream_synchronize.get() != nullptr)
    stream_synchronize.get()(on);
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

bool StreamOrderedEvictor::holds(std::uint64_t address) {
  std::lock_guard lock(mutex_);
  return model_.holds_any(&address, 1);
}

void StreamOrderedEvictor::on_range_freed(std::uint64_t address, std::uint64_t bytes) noexcept {
  HostWork work;
  {
    std::unique_lock lock(mutex_);
    // A host copy back may be writing into the range: it must end before the driver takes it back.
    restores_done_.wait(lock, [this] { return host_restores_ == 0; });
    model_.on_range_freed(address);
    release_dead_slots();
    if (stopped_) return;
    // So must every move of ours that reads or writes it. The free synchronizes the program's
    // context only: the eviction thread's copies run in a context of their own, and one handed
    // over may not be issued yet (the driver crashes copying from a range freed under it).
    try {
      for (const InFlight& move : in_flight_) {
        if (overlaps(move.ranges, address, bytes)) work.host_waits.push_back({move.done, move.handed_over});
      }
    } catch (const std::exception&) {
      // Out of memory for the list: the moves listed are waited for.
    }
  }
  run(work);
}

void StreamOrderedEvictor::on_buffer_returned(std::uint64_t address, std::uint64_t bytes,
                                              std::uint64_t stream) noexcept {
  if (!follows_buffers_) return;
  std::lock_guard lock(mutex_);
  core::logger().trace("returned {:#x}+{}K stream {:#x}", address, bytes >> 10, stream);
  model_.on_buffer_returned(address, bytes, stream);
  release_dead_slots();
}

void StreamOrderedEvictor::on_buffer_handed_out(std::uint64_t address, std::uint64_t bytes) noexcept {
  if (!follows_buffers_) return;
  std::lock_guard lock(mutex_);
  core::logger().trace("handed out {:#x}+{}K", address, bytes >> 10);
  model_.on_buffer_handed_out(address, bytes);
}

void StreamOrderedEvictor::reap() {
  // Event queries: none while a stream capture runs (the moves are reaped after it), none once
  // stopped (the events may be gone with their context).
  core::GateEntry entry;
  if (!entry || stopped_) return;
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
    const std::uint64_t anchor_time = anchor_time_.load(std::memory_order_relaxed);
    if (anchor_time != 0 && event_elapsed_time.get() != nullptr &&
        event_elapsed_time.get()(&ms, anchor_, move.done) == CUDA_SUCCESS && ms >= 0)
      end = anchor_time + static_cast<std::uint64_t>(static_cast<double>(ms) * 1e6);
    // The prefetch stream runs one prefetch at a time: one started no earlier than it was enqueued,
    // the one before it finished, and the eviction it waited for finished (reaped before it: our
    // moves are reaped in the order issued).
    std::uint64_t start = end;
    if (move.kind == Move::prefetch || move.kind == Move::placement) {
      // A placement runs after the placements before it on its stream.
      std::uint64_t& previous_end = move.kind == Move::prefetch ? last_prefetch_end_
                                    : move.ahead                ? last_ahead_end_
                                                                : last_placement_end_;
      std::uint64_t earliest = std::max(move.enqueued, previous_end);
      if (move.waited_eviction != 0) earliest = std::max(earliest, eviction_ends_[move.waited_eviction - 1]);
      if (move.after_discard) earliest = std::max(earliest, last_discard_end_);
      start = std::min(end, earliest);
      previous_end = std::max(previous_end, end);
    } else if (move.kind == Move::eviction) {
      eviction_ends_ = {end, eviction_ends_[0]};
    } else {
      last_discard_end_ = std::max(last_discard_end_, end);
      // Placements and copies back ahead wait for it (its room).
      last_placement_end_ = std::max(last_placement_end_, end);
      last_ahead_end_ = std::max(last_ahead_end_, end);
    }
    if (move.kind == Move::placement) placements_reaped_ = std::max(placements_reaped_, move.number);
    const bool to_gpu = move.kind == Move::prefetch || move.kind == Move::placement;
    for (const core::AddressRange& range : move.ranges) finished_.push_back({range, to_gpu, start, end});
    free_events_.push_back(move.done);
    if (move.ready != nullptr) free_events_.push_back(move.ready);
    in_flight_.pop_front();
    ++moves_reaped_;
  }
  while (!releases_.empty() && releases_.front().after_moves <= moves_reaped_) {
    store_->give_back(releases_.front().slot);
    releases_.pop_front();
  }
}

void StreamOrderedEvictor::release_dead_slots() noexcept {
  try {
    release_after_moves(model_.take_released());
  } catch (const std::exception&) {
    // Out of memory for the queue: those slots stay taken.
  }
}

void StreamOrderedEvictor::release_after_moves(const std::vector<core::AddressRange>& ranges) {
  if (!store_ || ranges.empty()) return;  // called at every launch: nothing to do, nothing to reap
  const std::uint64_t issued = moves_reaped_ + in_flight_.size();
  for_each_block(ranges, [&](std::uint64_t block, std::uint64_t) {
    if (void* slot = store_->detach(block)) releases_.push_back({slot, issued});
  });
  reap();
}

void StreamOrderedEvictor::take_slots(core::LaunchEviction& decision, std::vector<BlockCopy>& copies) {
  std::vector<core::AddressRange> copied, refused;
  // Merged within each of the decision's ranges only: each lies in one allocation, and a discard
  // spanning two is refused (CUDA_ERROR_INVALID_VALUE).
  for (const core::AddressRange& range : decision.swap_out) {
    bool merging = false;
    for_each_block({range}, [&](std::uint64_t block, std::uint64_t bytes) {
      void* slot = store_->take(block);
      if (slot == nullptr) {
        refused.push_back({block, bytes});
        merging = false;
        return;
      }
      copies.push_back({block, bytes, slot});
      if (merging) {
        copied.back().bytes += bytes;
      } else {
        copied.push_back({block, bytes});
        merging = true;
      }
    });
  }
  if (!refused.empty()) {
    // No free slot yet (the worker pins ahead of need), or never again: written back by the driver.
    const bool full = store_->full();
    if (full && !store_->error().empty() && swap_store_failed_.fetch_add(1, std::memory_order_relaxed) == 0)
      core::logger().warn("the swap store could not grow ({}): evictions go through the driver from now on",
                          store_->error());
    model_.swap_refused(refused, full);
    decision.evict.insert(decision.evict.end(), refused.begin(), refused.end());
  }
  decision.swap_out = std::move(copied);
}

CUresult StreamOrderedEvictor::swap_out(const std::vector<BlockCopy>& copies,
                                        const std::vector<core::AddressRange>& dropped, HostWork& work) {
  CUresult r = copy_blocks(copies, /*to_store=*/true, device_, stream_);
  // Dropped once the copies have ended: the store holds their contents from here on. A host
  // wait, on this fallback path only.
  if (r == CUDA_SUCCESS && !dropped.empty()) r = drop_after_copies(dropped, stream_);
  if (r != CUDA_SUCCESS) {
    // Nothing dropped: the copies enqueued read only. Their slots are free once they are done.
    work.stream_syncs.push_back(stream_);
    for (const BlockCopy& copy : copies) {
      if (void* slot = store_->detach(copy.block)) work.slots_to_free.push_back(slot);
    }
  }
  return r;
}

CUresult StreamOrderedEvictor::copy_back(const std::vector<core::AddressRange>& restore, HostWork& work,
                                         CUstream on, const Staging& staging) {
  std::vector<BlockCopy> copies;
  for_each_block(restore, [&](std::uint64_t block, std::uint64_t bytes) {
    // Never copied out cannot happen (the model swaps what the store took): skipped all the same.
    if (void* slot = store_->find(block)) copies.push_back({block, bytes, slot});
  });
  const auto started = std::chrono::steady_clock::now();
  const CUresult r = copy_blocks(copies, /*to_store=*/false, device_, on, &staging);
  copy_back_calls_ns_.fetch_add(ns_since(started), std::memory_order_relaxed);
  if (r != CUDA_SUCCESS) {
    // After the placement and whatever copies were enqueued: the host writes them all.
    work.stream_syncs.push_back(on);
    copy_back_on_host(restore, work);
  }
  return r;
}

void StreamOrderedEvictor::copy_back_on_host(const std::vector<core::AddressRange>& ranges, HostWork& work) {
  if (ranges.empty() || !store_) return;
  const bool first = work.copies.empty();
  for_each_block(ranges, [&](std::uint64_t block, std::uint64_t bytes) {
    if (void* slot = store_->detach(block)) work.copies.push_back({block, bytes, slot});
  });
  if (work.copies.empty()) return;
  if (core::logger().should_log(spdlog::level::trace))
    core::logger().trace("  host copies back{}", describe_ranges(ranges));
  if (first) ++host_restores_;  // other operations wait until these blocks hold their contents again
  work.before_copies.clear();
  for (const InFlight& move : in_flight_) work.before_copies.push_back({move.done, move.handed_over});
}

std::vector<StreamOrderedEvictor::Finished> StreamOrderedEvictor::poll_finished(std::uint64_t now) {
  {
    std::lock_guard lock(mutex_);
    if (stopped_) return std::exchange(finished_, {});
  }
  // Once, on the worker (the only user of the anchor), once the caller's clock (CUPTI's) runs, on
  // a stream of its own that is idle (ours may hold evictions waiting for the program): the anchor
  // completes within microseconds of `now`. With no lock held: it is a host wait.
  bool anchored = false;
  if (anchor_stream_ != nullptr && anchor_time_.load(std::memory_order_relaxed) == 0) {
    core::GateEntry entry;
    anchored = entry && event_record.get()(anchor_, anchor_stream_) == CUDA_SUCCESS &&
               event_synchronize.get() != nullptr && event_synchronize.get()(anchor_) == CUDA_SUCCESS;
  }
  std::lock_guard lock(mutex_);
  if (anchored) anchor_time_.store(now, std::memory_order_relaxed);
  last_poll_ = now;
  reap();
  return std::exchange(finished_, {});
}

void StreamOrderedEvictor::mark_progress(CUstream stream, std::uint64_t launch) {
  const std::uint64_t id = core::stream_id(reinterpret_cast<std::uintptr_t>(stream));
  MarkerRing* ring = nullptr;
  for (MarkerRing& candidate : markers_) {
    if (candidate.stream == id) ring = &candidate;
  }
  if (ring == nullptr && (ring = new_marker_ring(id, launch)) == nullptr) return;
  // A stream that launches in bursts (a library's side stream) is marked at each burst's start,
  // which shows the burst before it run: swaps of blocks it named wait for such a marker.
  const bool burst = launch - ring->last_launch >= kMarkerInterval;
  ring->last_launch = launch;
  if (ring->launches++ % kMarkerInterval != 0 && !burst) return;
  // Re-recording an event leaves earlier waits on it as they were: they keep its earlier state.
  if (event_record.get()(ring->events[ring->next], stream) != CUDA_SUCCESS) return;
  // Another thread's operation decided before it and not enqueued yet comes after it.
  ring->recorded_before[ring->next] = std::min(launch, enqueued_below_);
  ring->next = (ring->next + 1) % kMarkers;
  ring->count = std::min(ring->count + 1, kMarkers);
}

StreamOrderedEvictor::MarkerRing* StreamOrderedEvictor::new_marker_ring(std::uint64_t stream,
                                                                        std::uint64_t launch) {
  if (markers_.size() == kMarkerStreams) {
    // The ring of the stream that launched least lately starts over for this one (its events are
    // recorded anew), once that stream has been idle for a ring's worth of launches (a thread gone,
    // with its per-thread stream): streams taking turns would otherwise take each other's rings.
    MarkerRing& oldest =
        *std::min_element(markers_.begin(), markers_.end(),
                          [](const auto& a, const auto& b) { return a.last_launch < b.last_launch; });
    if (launch - oldest.last_launch < kMarkers * kMarkerInterval) return nullptr;
    oldest.stream = stream;
    oldest.next = oldest.count = 0;
    oldest.launches = 0;
    return &oldest;
  }
  MarkerRing fresh;
  fresh.stream = stream;
  for (CUevent& event : fresh.events) {
    if (event_create.get()(&event, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
      event = nullptr;
      return nullptr;  // the events made so far are kept for nothing: a few, once per stream at most
    }
  }
  markers_.push_back(fresh);
  return &markers_.back();
}

CUevent StreamOrderedEvictor::marker_after(CUstream stream, std::uint64_t launch) const {
  return marker_after_id(core::stream_id(reinterpret_cast<std::uintptr_t>(stream)), launch);
}

CUevent StreamOrderedEvictor::marker_after_id(std::uint64_t id, std::uint64_t launch) const {
  for (const MarkerRing& ring : markers_) {
    if (ring.stream != id) continue;
    // Oldest first: the first recorded after `launch` was enqueued.
    for (std::size_t i = 0; i < ring.count; ++i) {
      const std::size_t slot = (ring.next + kMarkers - ring.count + i) % kMarkers;
      if (ring.recorded_before[slot] > launch) return ring.events[slot];
    }
  }
  return nullptr;
}

std::array<CUevent, 2> StreamOrderedEvictor::placements_up_to(std::uint64_t number) const {
  std::array<CUevent, 2> latest{};  // finished (reaped) already, or none: nullptr
  for (auto it = in_flight_.rbegin(); it != in_flight_.rend() && (!latest[0] || !latest[1]); ++it) {
    CUevent& on_its_stream = latest[it->ahead ? 1 : 0];
    if (it->kind == Move::placement && it->number <= number && on_its_stream == nullptr)
      on_its_stream = it->done;
  }
  return latest;
}

CUevent StreamOrderedEvictor::discard_in_flight() const {
  for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
    if (it->kind == Move::discard) return it->done;
  }
  return nullptr;
}

StreamOrderedEvictor::EvictionRef StreamOrderedEvictor::eviction_up_to(std::uint64_t number) const {
  // Evictions run one after another on one stream: the latest up to `number` ends after the rest.
  for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
    if (it->kind == Move::eviction && it->number <= number) return {it->done, it->handed_over};
  }
  return {};  // finished (reaped) already
}

bool StreamOrderedEvictor::issue(CUstream stream, core::LaunchEviction& decision, std::uint64_t host_time,
                                 std::vector<core::AddressRange>& discarded, HostWork& work) {
  // The room the eviction in flight makes is needed now, unless it has finished already: the
  // model counts that room free from here on, so the launch waits for it whatever follows (on the
  // host, if the driver refuses the stream wait).
  const EvictionRef pending =
      decision.wait_for_eviction != 0 ? eviction_up_to(decision.wait_for_eviction) : EvictionRef{};
  if (pending) {
    if (CUresult r = wait_in_program_stream(stream, pending, work); r != CUDA_SUCCESS)
      return count_failure(r);
  }
  // An event for each move, taken first: when the host is kMaxEvents moves ahead of the GPU,
  // nothing is enqueued now and the next launches decide again.
  CUevent dropped = decision.discard.empty() ? nullptr : take_event();
  const bool evicts = !decision.evict.empty() || !decision.swap_out.empty();
  CUevent done = evicts ? take_event() : nullptr;
  // With an eviction thread every eviction goes there, after an event of its own.
  const bool to_thread = eviction_thread_ && evicts;
  CUevent ready = to_thread ? take_event() : nullptr;
  if ((!decision.discard.empty() && dropped == nullptr) ||
      (evicts && (done == nullptr || (to_thread && ready == nullptr)))) {
    for (CUevent event : {dropped, done, ready}) {
      if (event != nullptr) free_events_.push_back(event);
    }
    skipped_busy_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  CUresult r = CUDA_SUCCESS;
  bool program_done_recorded = false;
  if (dropped != nullptr) {
    EnqueueTimer timer(*this, Move::discard);
    // After every user of the dead blocks, named or not: those in the launch's stream before the
    // operation each was taken back at (or named at since), shown run by a progress marker, else
    // the stream's work so far. Dropped (and placed on the host, unless discard_in_place_) in one
    // call, nothing copied, on the drop stream: not behind evictions or placements.
    bool by_marker = false;
    r = follow_program(drop_stream_, stream, decision.discard_after_launch, by_marker);
    program_done_recorded = !by_marker;
    // A block copied back ahead may die before anything names it: not dropped beside that copy.
    if (CUevent ahead = every_placement_in_flight()[1]; ahead != nullptr && r == CUDA_SUCCESS)
      r = stream_wait_event.get()(drop_stream_, ahead, 0);
    // And after the eviction that last moved a victim out: the markers do not cover it where the
    // launch's own wait for it is left to the host work (the thread had not issued it yet).
    if (decision.discard_after_eviction != 0 && r == CUDA_SUCCESS) {
      if (const EvictionRef moving = eviction_up_to(decision.discard_after_eviction))
        r = wait_in_own_stream(drop_stream_, moving);
    }
    if (r == CUDA_SUCCESS) {
      // Where the driver lacks the in-place discard, dropped and placed on the host instead.
      r = discard_in_place_ && discard_batch.get() != nullptr
              ? discard_where_they_are(decision.discard, drop_stream_)
              : discard_and_prefetch_to(decision.discard, host, drop_stream_);
    }
    if (r == CUDA_SUCCESS) {
      // Queued: nothing the program enqueues later may run beside it (a block handed out again
      // would lose what is written into it), so the launch waits for it, or else the host does.
      discarded = std::exchange(decision.discard, {});
      r = event_record.get()(dropped, drop_stream_);
      if (r == CUDA_SUCCESS) {
        in_flight_.push_back({dropped, discarded, Move::discard, host_time});
        r = stream_wait_event.get()(stream, dropped, 0);
      } else {
        free_events_.push_back(std::exchange(dropped, nullptr));
      }
      if (r != CUDA_SUCCESS) work.stream_syncs.push_back(drop_stream_);
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
      if (!program_done_recorded) r = event_record.get()(program_done_, stream);
    }
    if (r == CUDA_SUCCESS) {
      if (!issue_eviction(stream, decision, host_time, after, done, ready, evicted, work)) return false;
    } else {
      for (CUevent event : {done, ready}) {
        if (event != nullptr) free_events_.push_back(event);
      }
    }
  }
  if (r != CUDA_SUCCESS) return count_failure(r);
  // The prefetch and placement wait for the latest eviction among those whose room they take, that
  // still move blocks they bring back, or whose swap may still drop one (after_drop): evictions end
  // in the order issued, so it covers the rest.
  const std::uint64_t up_to =
      std::max({decision.wait_for_eviction, decision.fetch_waits_for_eviction, decision.after_drop});
  const EvictionRef in_flight = up_to == decision.wait_for_eviction ? pending : eviction_up_to(up_to);
  const bool evicted_alongside = evicts && !evicted;
  const std::uint8_t waited_eviction = evicted ? 1 : in_flight ? (evicted_alongside ? 2 : 1) : 0;
  if (!decision.place.empty() || !decision.restore.empty())
    issue_placement(stream, decision, host_time, {in_flight, evicted}, waited_eviction, work);
  if (!decision.fetch.empty() &&
      !issue_prefetch(stream, decision, host_time, {in_flight, evicted}, dropped, waited_eviction))
    decision.fetch.clear();
  if (!decision.restore_ahead.empty()) issue_restore_ahead(decision, host_time, {in_flight, evicted}, work);
  return true;
}

void StreamOrderedEvictor::issue_restore_ahead(core::LaunchEviction& decision, std::uint64_t host_time,
                                               std::array<EvictionRef, 2> room, HostWork& work) {
  CUevent placed = take_event_or_count_busy();
  if (placed == nullptr) {
    copy_back_on_host(std::exchange(decision.restore_ahead, {}), work);  // only the store holds them
    return;
  }
  EnqueueTimer timer(*this, Move::placement);
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device_;
  // On the program's thread (a placement behind a dependency returns at once:
  // bench/dependent_call_probe.cu): issued by the eviction thread, a copy back queued behind the
  // swaps' host waits, and by a thread of its own its placement took turns with the swaps' drops in
  // the driver; the sweep and the CuPy loop ran 1.6-2x slower either way (docs/benchmarks.md).
  // Not after the program's work so far: no operation enqueued can use a swapped block (one naming
  // it had it restored first); only the room (the evictions and discards that free it) and the
  // block's own copy out must be done.
  const Staging& staging = restore_stream_ == discard_stream_ ? restore_staging_ : ahead_staging_;
  CUresult r = CUDA_SUCCESS;
  for (EvictionRef eviction : room) {
    if (eviction && r == CUDA_SUCCESS) r = wait_in_own_stream(restore_stream_, eviction);
  }
  if (const EvictionRef before = eviction_up_to(decision.ahead_after_eviction); before && r == CUDA_SUCCESS)
    r = wait_in_own_stream(restore_stream_, before);
  if (CUevent dropping = discard_in_flight(); dropping != nullptr && r == CUDA_SUCCESS)
    r = stream_wait_event.get()(restore_stream_, dropping, 0);
  if (r == CUDA_SUCCESS) r = discard_and_prefetch_to(decision.restore_ahead, gpu, restore_stream_);
  if (r == CUDA_SUCCESS)
    copy_back(decision.restore_ahead, work, restore_stream_, staging);  // a failure: the host does
  if (r == CUDA_SUCCESS) r = event_record.get()(placed, restore_stream_);
  if (r != CUDA_SUCCESS) {
    // The host copies back what is not known to be on its way, after everything enqueued.
    free_events_.push_back(placed);
    work.stream_syncs.push_back(restore_stream_);
    copy_back_on_host(decision.restore_ahead, work);
    if (prefetch_failures_.fetch_add(1, std::memory_order_relaxed) == 0)
      core::logger().warn("a copy back ahead of a launch failed ({}); later failures are only counted",
                          describe("", r));
    return;
  }
  in_flight_.push_back({placed, decision.restore_ahead, Move::placement, host_time, 0, false,
                        decision.ahead_placement_number, 0, nullptr, /*ahead=*/true});
  release_after_moves(decision.restore_ahead);  // the copies back read the slots until it is done
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
                                          EvictionRef& evicted, HostWork& work) {
  const auto give_back = [this, done, &ready](CUresult r) {
    for (CUevent event : {done, ready}) {
      if (event != nullptr) free_events_.push_back(event);
    }
    return count_failure(r);
  };
  CUresult r = stream_wait_event.get()(stream_, after, 0);
  // Victims other streams named: after their users there too (the model checked that markers show
  // them, under this lock).
  for (const core::LaunchEviction::StreamOperation& user : decision.after_other_streams) {
    const CUevent marker = marker_after_id(user.stream, user.operation);
    if (r == CUDA_SUCCESS)
      r = marker != nullptr ? stream_wait_event.get()(stream_, marker, 0) : CUDA_ERROR_NOT_READY;
  }
  // A victim placed ahead (no operation named it yet) may still be arriving.
  if (decision.evict_after_placement > placements_reaped_ && r == CUDA_SUCCESS) {
    for (CUevent placing : placements_up_to(decision.evict_after_placement)) {
      if (placing != nullptr && r == CUDA_SUCCESS) r = stream_wait_event.get()(stream_, placing, 0);
    }
  }
  if (r != CUDA_SUCCESS) return give_back(r);
  std::vector<BlockCopy> copies;
  if (!decision.swap_out.empty()) take_slots(decision, copies);
  // In flight from here on (handed over, or enqueued here): the launch's stream waits for it now
  // where the model says so (on the host, once the thread has issued it or where the stream
  // cannot wait).
  const auto track = [&](std::uint32_t handed_over, CUevent relayed) {
    std::vector<core::AddressRange> moved = decision.evict;
    moved.insert(moved.end(), decision.swap_out.begin(), decision.swap_out.end());
    in_flight_.push_back({done, std::move(moved), Move::eviction, host_time, 0, false,
                          decision.eviction_number, handed_over, relayed});
    if (decision.wait_for_evict) {
      evicted = {done, handed_over};
      wait_in_program_stream(stream, evicted, work);
    }
    return true;
  };
  if (ready != nullptr) {
    // Everything to the thread, the swap's copies and drop included: the thread waits for the
    // copies to end before it drops (drop_after_copies), which no program thread should. Our
    // stream relays `after` into an event of the eviction's own: markers and program_done_ are
    // recorded again by later launches, perhaps before the thread gets to it.
    const std::uint32_t number =
        event_record.get()(ready, stream_) == CUDA_SUCCESS
            ? eviction_thread_->hand_over(
                  {ready, done, decision.evict, copies, decision.swap_out, decision.wait_for_evict})
            : 0;
    if (number != 0) return track(number, ready);
    free_events_.push_back(std::exchange(ready, nullptr));
  }
  // The thread stopped (the process exits) or there is none: issued here, the swapped blocks first.
  if (!copies.empty()) {
    if (r = swap_out(copies, decision.swap_out, work); r != CUDA_SUCCESS) return give_back(r);
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
  if (r != CUDA_SUCCESS) {
    if (copies.empty()) return give_back(r);
    // The swapped blocks are dropped already: the eviction happened (a driver eviction refused
    // leaves its blocks resident past the model's count, not lost), only its end is unknown.
    count_failure(r);
    work.stream_syncs.push_back(stream_);
    free_events_.push_back(done);
    return true;
  }
  return track(0, nullptr);
}

void StreamOrderedEvictor::issue_placement(CUstream stream, core::LaunchEviction& decision,
                                           std::uint64_t host_time, std::array<EvictionRef, 2> room,
                                           std::uint8_t waited_eviction, HostWork& work) {
  CUevent placed = take_event_or_count_busy();
  if (placed == nullptr) {
    decision.place.clear();
    copy_back_on_host(std::exchange(decision.restore, {}), work);  // only the store holds them
    return;
  }
  EnqueueTimer timer(*this, Move::placement);
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device_;
  // After the blocks' earlier users: dropping contents under a kernel still running is undefined.
  CUresult r = wait_for_placed_users(stream, decision);
  // After the discards whose room it may take, and the copies back ahead: a block copied back ahead
  // that died and was handed out again is placed after that copy.
  for (CUevent before : {discard_in_flight(), every_placement_in_flight()[1]}) {
    if (before != nullptr && r == CUDA_SUCCESS) r = stream_wait_event.get()(discard_stream_, before, 0);
  }
  for (EvictionRef eviction : room) {
    if (eviction && r == CUDA_SUCCESS) r = wait_in_own_stream(discard_stream_, eviction);
  }
  // The eviction that moved a placed block out may still run (waited for by a launch in another
  // stream, or by none yet): dropping pages under it is undefined.
  for (const InFlight& move : in_flight_) {
    if (move.kind == Move::eviction && move.number == decision.place_after_eviction &&
        decision.place_after_eviction != 0 && r == CUDA_SUCCESS)
      r = wait_in_own_stream(discard_stream_, {move.done, move.handed_over});
  }
  // Swapped blocks are placed like fresh ones, then copied back from the store.
  std::vector<core::AddressRange> placing = decision.place;
  placing.insert(placing.end(), decision.restore.begin(), decision.restore.end());
  if (r == CUDA_SUCCESS) r = discard_and_prefetch_to(placing, gpu, discard_stream_);
  if (r == CUDA_SUCCESS && !decision.restore.empty())
    copy_back(decision.restore, work, discard_stream_, restore_staging_);  // a failure: the host does
  if (r != CUDA_SUCCESS) {
    // Nothing enqueued: the launch faults the blocks in (their stale contents copied, as before);
    // what only the store holds is copied back by the host first.
    copy_back_on_host(decision.restore, work);
    decision.restore.clear();
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
    in_flight_.push_back({placed, std::move(placing), Move::placement, host_time, waited_eviction, false,
                          decision.placement_number});
    r = stream_wait_event.get()(stream, placed, 0);
  } else {
    free_events_.push_back(placed);
  }
  if (r != CUDA_SUCCESS) work.stream_syncs.push_back(discard_stream_);
  // The copies back read the slots until this placement is done.
  release_after_moves(decision.restore);
}

CUresult StreamOrderedEvictor::follow_program(CUstream ours, CUstream stream, std::uint64_t launch,
                                              bool& by_marker) {
  if (CUevent users_done = marker_after(stream, launch); users_done != nullptr) {
    by_marker = true;
    return stream_wait_event.get()(ours, users_done, 0);
  }
  CUresult r = event_record.get()(program_done_, stream);
  if (r == CUDA_SUCCESS) r = stream_wait_event.get()(ours, program_done_, 0);
  return r;
}

CUresult StreamOrderedEvictor::wait_for_placed_users(CUstream stream, const core::LaunchEviction& decision) {
  // PyTorch hands a block freed on a stream out again on that stream at once, so its users there
  // may not have run yet: a progress marker past them where one shows it, else the stream's work
  // so far (whose wait holds this thread in the placement call until the GPU has run it).
  if (!decision.place_after_stream_work && decision.place_after_launch == 0) return CUDA_SUCCESS;
  bool by_marker = false;
  const CUresult r =
      follow_program(discard_stream_, stream,
                     decision.place_after_stream_work ? kAllWork : decision.place_after_launch, by_marker);
  if (by_marker) placements_after_marker_.fetch_add(1, std::memory_order_relaxed);
  return r;
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
    if (eviction && r == CUDA_SUCCESS) r = wait_in_own_stream(fetch_stream_, eviction);
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
  if (issuing_own_moves()) return {};  // deepum's own copy to or from the swap store
  auto* stream = reinterpret_cast<CUstream>(static_cast<std::uintptr_t>(core::stream_handle(stream_id)));
  // The legacy stream is never captured (and asking about it during another thread's global
  // capture would itself be an error). A captured operation runs when its graph is launched, and
  // a graph launch names nothing: everything is made safe before it then.
  if (stream != nullptr) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE) {
      skipped_capturing_.fetch_add(1, std::memory_order_relaxed);
      return {};
    }
  }
  // Inside the capture gate for the whole operation, decision and host work: a capture that begins
  // waits for it, and while one runs in another thread this one is only counted.
  core::GateEntry entry;
  bool may_evict = stream_ != nullptr && static_cast<bool>(entry);
  HostWork work;
  Moves moves;
  {
    const std::unique_lock lock = lock_settled();
    if (!lock.owns_lock()) return {};
    // A move now could be ordered after a wait whose value later work writes, and that work may
    // wait for the move; swapped blocks the operation may reach are copied back by the host.
    // Asked under the lock: a wait on this device entered since is enqueued after this
    // operation's moves (its own decision takes this lock first). One on another device could
    // still come before them, through an event the program records after it and this stream waits
    // for, within the moment this decision takes.
    if (may_evict && program_value_waits().any_waiting()) {
      may_evict = false;
      held_by_value_waits_.fetch_add(1, std::memory_order_relaxed);
    }
    OwnMovesScope issuing;
    try {
      // Numbered next by the model; enqueued once this thread's driver call returns.
      const std::uint64_t operation = model_.launches_decided() + 1;
      enqueued_below_ = unenqueued_.decided(operation);
      model_.set_enqueued_below(enqueued_below_);
      if (may_evict) note_ended_evictions();
      moves = decide_and_issue(stream, host_time, may_evict, decide(model_, may_evict), work);
      moves.behind_moves = moves.behind_moves || !work.empty();
    } catch (const std::exception&) {
      // Out of memory for the victims' list: this operation evicts nothing, and blocks it named in
      // part may still count as fresh, so none does.
      model_.forget_fresh();
    }
  }
  run(work);
  return moves;
}

StreamOrderedEvictor::Moves StreamOrderedEvictor::decide_and_issue(CUstream stream, std::uint64_t host_time,
                                                                   bool may_evict,
                                                                   core::LaunchEviction decision,
                                                                   HostWork& work) {
  if (core::logger().should_log(spdlog::level::trace)) log_decision(stream, decision);
  // Swapping: what the operation may read without naming it is copied back first, and the slots
  // of blocks whose contents died are freed behind the moves that use them.
  copy_back_on_host(decision.unswap, work);
  release_after_moves(model_.take_released());
  // A placement is ordered before the launch that asked for it only: an operation in another
  // stream naming the same blocks, or one that may reach memory it does not name, waits for it
  // (the host waits where the stream cannot). (Placements are numbered in issue order and reaped
  // in it: one reaped is done.)
  bool waits = false;  // for a move decided before
  if (decision.after_placement > placements_reaped_ || decision.after_every_placement) {
    const std::array<CUevent, 2> placing = decision.after_every_placement
                                               ? every_placement_in_flight()
                                               : placements_up_to(decision.after_placement);
    for (CUevent placed : placing) {
      waits = waits || placed != nullptr;
      if (placed != nullptr && stream_wait_event.get()(stream, placed, 0) != CUDA_SUCCESS)
        work.host_waits.push_back({placed, 0});
    }
  }
  // A block it names whose store copy was released may still be dropped by its swap, which no
  // launch need have waited for (one alongside the program is waited for only when its room is
  // needed, and plan_ahead may take that room): the drop must come first.
  if (decision.after_drop != 0) {
    if (const EvictionRef dropping = eviction_up_to(decision.after_drop)) {
      waits = true;
      wait_in_program_stream(stream, dropping, work);  // an error: the host waits instead
    }
  }
  // Before the waits this launch may get: a marker shows only the program's own progress.
  if (may_evict) mark_progress(stream, model_.launches_decided());
  if (decision.wait_for_eviction == 0 && decision.evict.empty() && decision.discard.empty() &&
      decision.fetch.empty() && decision.place.empty() && decision.swap_out.empty() &&
      decision.restore.empty() && decision.restore_ahead.empty())
    return {{}, {}, {}, waits};
  std::vector<core::AddressRange> discarded;
  if (!issue(stream, decision, host_time, discarded, work)) {
    model_.eviction_failed(decision);  // what was not enqueued
    // Nothing placed: what only the store holds is copied back by the host (the launch then
    // faults it in).
    copy_back_on_host(decision.restore, work);
    copy_back_on_host(decision.restore_ahead, work);
    return {{}, std::move(discarded), {}, true};
  }
  // The live estimate counts placements and copies back as prefetches, copies out as evictions.
  decision.fetch.insert(decision.fetch.end(), decision.place.begin(), decision.place.end());
  decision.fetch.insert(decision.fetch.end(), decision.restore.begin(), decision.restore.end());
  decision.fetch.insert(decision.fetch.end(), decision.restore_ahead.begin(), decision.restore_ahead.end());
  decision.evict.insert(decision.evict.end(), decision.swap_out.begin(), decision.swap_out.end());
  return {std::move(decision.evict), std::move(discarded), std::move(decision.fetch), true};
}

void StreamOrderedEvictor::log_decision(CUstream stream, const core::LaunchEviction& decision) const {
  // One line per operation, then one per non-empty move: enough to follow a block's history.
  core::logger().trace("op {} stream {:#x} names{}", model_.launches_decided(),
                       reinterpret_cast<std::uintptr_t>(stream), describe_ranges(model_.last_named()));
  const std::pair<const char*, const std::vector<core::AddressRange>*> moves[] = {
      {"evict", &decision.evict},     {"swap_out", &decision.swap_out},
      {"discard", &decision.discard}, {"place", &decision.place},
      {"restore", &decision.restore}, {"fetch", &decision.fetch},
      {"unswap", &decision.unswap},   {"restore_ahead", &decision.restore_ahead}};
  for (const auto& [name, ranges] : moves) {
    if (!ranges->empty()) core::logger().trace("  {}{}", name, describe_ranges(*ranges));
  }
  core::logger().trace(
      "  numbers eviction {} placement {} ahead {}; waits for_eviction {} evict_after_launch {} "
      "after_placement {} every {} after_drop {} ahead_after_eviction {} evict_after_placement {} "
      "discard_after_eviction {} fetch_waits {} place_after_eviction {} wait_for_evict {}",
      decision.eviction_number, decision.placement_number, decision.ahead_placement_number,
      decision.wait_for_eviction, decision.evict_after_launch, decision.after_placement,
      decision.after_every_placement, decision.after_drop, decision.ahead_after_eviction,
      decision.evict_after_placement, decision.discard_after_eviction, decision.fetch_waits_for_eviction,
      decision.place_after_eviction, decision.wait_for_evict);
}

StreamOrderedEvictor::Moves StreamOrderedEvictor::before_launch(const core::KernelLaunch& launch,
                                                                const core::LaunchPointers* every) noexcept {
  return before_operation(launch.stream, launch.host_time,
                          [&](core::LaunchOrderedResidency& model, bool may_evict) {
                            return model.before_launch(launch, may_evict, every);
                          });
}

StreamOrderedEvictor::Moves StreamOrderedEvictor::before_copy(const core::CopyLaunch& copy,
                                                              const core::LaunchPointers* table) noexcept {
  return before_operation(copy.stream, copy.host_time,
                          [&](core::LaunchOrderedResidency& model, bool may_evict) {
                            return model.before_copy(copy, may_evict, table);
                          });
}

void StreamOrderedEvictor::stop_placing() noexcept {
  HostWork work;
  {
    std::lock_guard lock(mutex_);
    stop_placing_locked(work);
  }
  run(work);
}

void StreamOrderedEvictor::stop_placing_locked(HostWork& work) noexcept {
  OwnMovesScope issuing;
  places_fresh_.store(false, std::memory_order_relaxed);
  discard_in_place_ = false;
  model_.stop_placing();
  try {
    copy_back_on_host(model_.stop_swapping(), work);
  } catch (const std::exception&) {
    // Out of memory for the list: nothing was unmarked (stop_swapping builds it first).
  }
}

void StreamOrderedEvictor::before_other_device_use(const std::uint64_t* pointers,
                                                   const std::uint64_t* extents, std::size_t count) noexcept {
  if (issuing_own_moves() || (!swaps_ && !places_fresh_.load(std::memory_order_relaxed))) return;
  HostWork work;
  {
    // Settled: a copy back another thread is making of one of them ends first.
    const std::unique_lock lock = lock_settled();
    if (!lock.owns_lock()) return;
    OwnMovesScope issuing;
    try {
      const core::LaunchOrderedResidency::OtherDeviceUse use =
          model_.named_by_other_device(pointers, extents, count);
      copy_back_on_host(use.unswap, work);
      // The latest placements up to the latest that placed any of them cover the rest.
      if (use.after_placement > placements_reaped_) {
        for (CUevent placed : placements_up_to(use.after_placement)) {
          if (placed != nullptr) work.host_waits.push_back({placed, 0});
        }
      }
    } catch (const std::exception&) {
      // Out of memory for the list: nothing was unmarked (named_by_other_device builds it first).
    }
  }
  run(work);
}

bool StreamOrderedEvictor::stop_placing_for_other_device() noexcept {
  HostWork work;
  bool first = false;
  {
    // Settled: where another thread stopped them, its copies back end first.
    const std::unique_lock lock = lock_settled();
    if (!lock.owns_lock()) return false;
    first = !stopped_for_other_device_;
    if (first) {
      stopped_for_other_device_ = true;
      stop_placing_locked(work);
    }
    for (CUevent placed : every_placement_in_flight()) {
      if (placed != nullptr) work.host_waits.push_back({placed, 0});
    }
  }
  run(work);
  return first;
}

void StreamOrderedEvictor::forget_fresh() noexcept {
  if (issuing_own_moves() || (!places_fresh_.load(std::memory_order_relaxed) && !swaps_)) return;
  // While a stream capture runs nothing is swapped and no placement is in flight
  // (restore_before_capture): only freshness ends.
  core::GateEntry entry;
  HostWork work;
  {
    const std::unique_lock lock = lock_settled();
    if (!lock.owns_lock()) return;
    OwnMovesScope issuing;
    try {
      if (entry) {
        copy_back_on_host(model_.forget_fresh_and_unswap(), work);
      } else {
        model_.forget_fresh();
      }
    } catch (const std::exception&) {
      model_.forget_fresh();
    }
    // The copy's stream is unknown: the host waits for the placements in flight.
    for (CUevent placed : every_placement_in_flight()) {
      if (placed != nullptr && entry) work.host_waits.push_back({placed, 0});
    }
  }
  run(work);
}

std::uint64_t StreamOrderedEvictor::swap_store_pinned_bytes() {
  std::lock_guard lock(mutex_);
  return store_ ? store_->pinned_bytes() : 0;
}

std::string StreamOrderedEvictor::swap_store_error() {
  std::lock_guard lock(mutex_);
  return store_ ? store_->error() : std::string{};
}

core::LaunchOrderedStats StreamOrderedEvictor::stats() {
  std::lock_guard lock(mutex_);
  return model_.stats();
}

}  // namespace deepum::cuda
