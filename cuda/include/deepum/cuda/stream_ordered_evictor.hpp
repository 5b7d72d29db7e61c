// StreamOrderedEvictor: holds the resident limit at each launch, on the program's thread, by
// evictions ordered in the launch's stream (see core::LaunchOrderedResidency for the model), and
// with prefetching, moves what the launch names to the GPU in bulk before it.
//
// An eviction runs on a stream of deepum's own, after an event recorded in the launch's stream
// (so after every earlier launch there, the users of the victims included), and the launch's
// stream waits for its end before the launch that needs the room: the GPU cannot fault in past
// the limit, however late CUPTI's records come. Streams being captured into a graph are left
// alone (an event would become a graph node). Victims used by other streams may be faulted back
// by the driver: correct, only slower.
//
// Discarding: blocks PyTorch's allocator holds in its cache (dead until handed out again) are
// dropped instead of written back when they are chosen as victims, on a third stream, after the
// program's work so far in the launch's stream (the stream they were freed on), and the launch
// waits for the discard (quick: nothing moves).
//
// Prefetching: the launch's named blocks not yet resident are prefetched on a second stream of
// deepum's as soon as the launch is enqueued, after the evictions the launch waits for (into the
// room they make), and the launch's stream waits for them. The host enqueues a training step's launches
// well ahead of the GPU, so most prefetches run while earlier kernels compute, and a kernel finds
// its memory resident instead of faulting it in page by page.
//
// Swapping (stream_ordered_swap): live victims are copied into pinned host memory of deepum's
// (HostSwapStore) and then dropped on the GPU, by the eviction thread where there is one; a launch
// naming one has it placed and copied back on the discard stream, ordered like a placement. A
// victim other streams named too is swapped only where each of them has a progress marker after
// its users there (kept for streams that launch in bursts, such as cuDNN's side streams), and the
// swap waits for those markers; else the driver moves it. An operation that
// may reach memory it does not name first has every swapped block copied back by the host.
//
// With an eviction thread (stream_ordered_eviction_thread), every eviction is issued there
// (EvictionThread, in a CUDA context of its own), not in the program's thread, which the driver
// would hold for the whole move; a launch that needs one's room waits on the host until the thread
// has issued it, then on its event.
//
// Locking (docs/ARCHITECTURE.md, "Lock discipline"): mutex_ guards the model and the order of what
// is enqueued on deepum's streams, so it is held across the driver's enqueueing calls (event
// records, stream waits, asynchronous copies, discards and placements) and never across a host
// wait: what a decision needs the host to wait for (an event, a stream, the eviction thread, a copy
// back into managed memory) is collected in a HostWork and done once the lock is released, before
// the operation is let through. The one wait under the lock is for the eviction thread to issue an
// eviction whose room a prefetch or placement on our own streams needs; that thread takes no lock
// of ours. While a program thread copies swapped blocks back on the host, other operations wait
// for it (restores_done_) without holding the lock. Every operation runs inside the capture gate
// (core::CaptureGate): while a stream capture runs nothing is moved and nothing queried.
#pragma once

#include <cuda.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "deepum/core/launch_ordered_residency.hpp"
#include "deepum/core/unenqueued_operations.hpp"
#include "deepum/cuda/eviction_thread.hpp"
#include "deepum/cuda/host_swap_store.hpp"
#include "deepum/cuda/own_moves.hpp"

namespace deepum::cuda {

class StreamOrderedEvictor {
 public:
  StreamOrderedEvictor(std::uint64_t limit_bytes, std::uint64_t batch_bytes,
                       core::LaunchOrderedOptions options = {}, bool eviction_thread = false)
      : model_(limit_bytes, batch_bytes, options),
        follows_buffers_(options.discard_dead || options.place_fresh || options.swap),
        places_fresh_(options.place_fresh),
        discard_in_place_(options.place_fresh),
        swap_store_bytes_(options.swap ? options.swap_bytes : 0),
        swap_reserve_bytes_(std::max<std::uint64_t>(HostSwapStore::kChunkBytes * 4, 2 * batch_bytes)),
        swaps_(options.swap),
        wants_eviction_thread_(eviction_thread) {}

  // Creates the streams and events in the current context, and the eviction thread if asked for.
  // Empty on success, else what failed; the thread failing to start is only logged (evictions are
  // then all issued in the program's threads).
  std::string create();
  // Ends the evictor (at exit, or before the context is reset): what was handed to the eviction
  // thread is issued and the thread ended; every swapped block is copied back unless
  // `contents_lost` (the memory is being freed); every later operation passes through untouched.
  void stop(bool contents_lost = false);
  // The context is being destroyed and this runs inside the driver's call (a CUPTI callback): as
  // stop(true), without waiting for the eviction thread.
  void abandon_context();
  // Worker: pins the swap store's next chunks, with no lock held while pinning, keeping a reserve
  // free ahead of the swaps.
  void grow_swap_store() noexcept;
  // Before a stream capture begins, with the capture gate closed and no capture running yet:
  // every swapped block is copied back, so that no operation needs a host copy while it runs.
  void restore_before_capture() noexcept;
  bool has_eviction_thread() const { return eviction_thread_ != nullptr; }
  bool eviction_thread_has_own_context() const {
    return eviction_thread_ && eviction_thread_->has_own_context();
  }

  // Allocation hooks, any thread.
  void on_range_allocated(std::uint64_t address, std::uint64_t bytes) noexcept;
  // Whether `address` lies in a range this engine holds.
  bool holds(std::uint64_t address);
  // Before the range is released: returns once no move of deepum's reads or writes it any more.
  void on_range_freed(std::uint64_t address, std::uint64_t bytes) noexcept;
  // The program's allocator took a buffer back on `stream`, or handed one out (see
  // LaunchOrderedResidency); any thread. Without discarding, nothing (not even the lock: PyTorch
  // calls these on every allocation).
  void on_buffer_returned(std::uint64_t address, std::uint64_t bytes, std::uint64_t stream) noexcept;
  void on_buffer_handed_out(std::uint64_t address, std::uint64_t bytes) noexcept;
  // The calling thread's driver call, whose operation before_launch or before_copy saw at its
  // entry, has returned: the driver has enqueued it. Any thread; takes no lock of the engine's.
  void operation_enqueued() noexcept { unenqueued_.enqueued(); }
  // What was enqueued before one launch: the ranges evicted, discarded (dead, dropped) and
  // prefetched (empty: none, or the driver refused; the first refusal is logged), and whether the
  // launch was ordered behind deepum's moves at all (any move decided for it, a wait for one in its
  // stream, or host work before it returns).
  struct Moves {
    std::vector<core::AddressRange> evicted, discarded, prefetched;
    bool behind_moves = false;
  };
  // Program threads, inside the launch callback at API entry (before the launch is enqueued):
  // enqueues what must come before the launch.
  // `every`: all of the launch's pointers, where it holds more than KernelLaunch keeps.
  Moves before_launch(const core::KernelLaunch& launch, const core::LaunchPointers* every = nullptr) noexcept;
  // The same before a copy or memset (its driver API entry); `table`: the managed pointers it
  // carries to the GPU (LaunchOrderedResidency::before_copy's `referenced`), or nullptr.
  Moves before_copy(const core::CopyLaunch& copy, const core::LaunchPointers* table = nullptr) noexcept;
  // A copy deepum does not decode may have written managed memory: no block is fresh any more, and
  // the host waits for the placements in flight (the copy's stream is unknown).
  void forget_fresh() noexcept;
  // No more placements, and dead victims go back to being placed on the host: deepum cannot see
  // every write (CUPTI refused a launch or copy callback). Swapping stops too, every swapped block
  // copied back.
  void stop_placing() noexcept;
  // This engine orders nothing before another device's operations, so none of its blocks may be
  // away or dropped under one. Before an operation of another device that names `pointers` (each
  // reaching `extents` bytes, 0: to the end of its allocation), in the program's thread: those of
  // ours come back where swapped, the placements that made them resident end, and none is swapped
  // or placed fresh until handed out again (LaunchOrderedResidency::named_by_other_device).
  void before_other_device_use(const std::uint64_t* pointers, const std::uint64_t* extents,
                               std::size_t count) noexcept;
  // Before an operation of another device that may reach memory it does not name: swaps and
  // placement of fresh blocks stop for good (stop_placing), after the placements in flight end.
  // Returns true the one time they stop for that reason.
  bool stop_placing_for_other_device() noexcept;
  // Pinned host memory the swap store holds, and the first error it met (empty: none).
  std::uint64_t swap_store_pinned_bytes();
  // The worker's time pinning the store's chunks (cuMemHostAlloc), all of them.
  std::uint64_t swap_store_pin_ns() const { return swap_store_pin_ns_.load(std::memory_order_relaxed); }
  std::string swap_store_error();
  // Host time the program's threads spent copying swapped blocks back themselves, in ns.
  std::uint64_t host_copy_back_ns() const { return host_copy_back_ns_.load(std::memory_order_relaxed); }

  // An eviction or prefetch that finished, on the clock of poll_finished's `now`.
  struct Finished {
    core::AddressRange range;
    bool to_gpu = false;
    // start: prefetches only, when our stream got to it: after the prefetch before it and the
    // eviction it waited for (a start read early would count the range resident while the
    // eviction making its room still held the victims, an overshoot that never was).
    std::uint64_t start = 0, end = 0;
  };
  // Worker: the moves that finished since the last call, oldest first (CUPTI loses many of the
  // driver's records of them; the caller accounts for them itself). The first call sets the
  // clock's origin.
  std::vector<Finished> poll_finished(std::uint64_t now);

  core::LaunchOrderedStats stats();
  std::uint64_t skipped_capturing() const { return skipped_capturing_.load(std::memory_order_relaxed); }
  // Operations that moved nothing because a stream memory wait of the program's might still be
  // waiting (program_value_waits()).
  std::uint64_t held_by_value_waits() const { return held_by_value_waits_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const {
    return failures_.load(std::memory_order_relaxed) + (eviction_thread_ ? eviction_thread_->failures() : 0);
  }
  // Moves not issued because kMaxEvents were still ahead of the GPU.
  std::uint64_t skipped_busy() const { return skipped_busy_.load(std::memory_order_relaxed); }
  std::uint64_t prefetch_failures() const { return prefetch_failures_.load(std::memory_order_relaxed); }
  // Host time the program's threads spent in the driver's move calls (enqueuing evictions,
  // discards and prefetches, the waits included), in ns: a call that holds the thread leaves the
  // GPU without work.
  // placement_copy_calls_ns: of the placements, the copies back from the store.
  // eviction_thread_ns: the eviction thread's own time in its move calls, of which its copies into
  // the store and its drops after them (of those, its waits for the copies to end and the drop
  // calls); eviction_thread_waits_ns: the program's threads' waits for it to issue an eviction.
  struct EnqueueTimes {
    std::uint64_t evictions_ns = 0, discards_ns = 0, prefetches_ns = 0, placements_ns = 0;
    std::uint64_t placement_copy_calls_ns = 0;
    std::uint64_t eviction_thread_ns = 0, eviction_thread_copy_calls_ns = 0, eviction_thread_drops_ns = 0;
    std::uint64_t eviction_thread_drop_copy_waits_ns = 0, eviction_thread_drop_calls_ns = 0;
    std::uint64_t eviction_thread_waits_ns = 0;
  };
  EnqueueTimes enqueue_times() const {
    const auto held = [this](Move kind) {
      return enqueue_ns_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
    };
    return {held(Move::eviction),
            held(Move::discard),
            held(Move::prefetch),
            held(Move::placement),
            copy_back_calls_ns_.load(std::memory_order_relaxed),
            eviction_thread_ ? eviction_thread_->held_ns() : 0,
            eviction_thread_ ? eviction_thread_->copy_calls_ns() : 0,
            eviction_thread_ ? eviction_thread_->drops_ns() : 0,
            eviction_thread_ ? eviction_thread_->drop_copy_waits_ns() : 0,
            eviction_thread_ ? eviction_thread_->drop_calls_ns() : 0,
            eviction_thread_ ? eviction_thread_->waited_ns() : 0};
  }
  // Evictions that started after their victims' last users (a progress marker), not after every
  // launch enqueued before the one needing the room.
  std::uint64_t evictions_after_marker() const {
    return evictions_after_marker_.load(std::memory_order_relaxed);
  }
  // Placements that followed their blocks' earlier users (a progress marker), not the launch
  // stream's work so far.
  std::uint64_t placements_after_marker() const {
    return placements_after_marker_.load(std::memory_order_relaxed);
  }

  // Events for the ends of moves: enough for every move the GPU has not reached yet (the host
  // runs up to a training step ahead; GPT-2 124M at 3x decided 262 evictions in 11 steps, and
  // with prefetching a launch in three or so has a prefetch). Created up front, then as needed.
  static constexpr std::size_t kEvents = 256;
  static constexpr std::size_t kMaxEvents = 16384;
  // Progress markers: an event recorded in a program stream every kMarkerInterval of its launches,
  // the last kMarkers kept, so an eviction can start once the stream has run the victims' last
  // users instead of everything enqueued before the launch that needs the room (the host runs up
  // to a training step ahead: that wait left the link idle while the GPU caught up). Streams past
  // kMarkerStreams take over the ring of a stream idle for kMarkers * kMarkerInterval launches.
  static constexpr std::size_t kMarkers = 64, kMarkerInterval = 16, kMarkerStreams = 8;

 private:
  enum class Move : std::uint8_t { eviction, discard, prefetch, placement };
  struct InFlight {
    CUevent done = nullptr;  // recorded on our stream after the move
    std::vector<core::AddressRange> ranges;
    Move kind = Move::eviction;
    std::uint64_t enqueued = 0;  // host time of the launch it came before
    // A prefetch or placement after the eviction whose room it waited for: 0 none, 1 the latest
    // eviction issued before it, 2 the one before that (the latest runs alongside).
    std::uint8_t waited_eviction = 0;
    bool after_discard = false;  // a prefetch after the latest discard issued before it
    // An eviction's LaunchEviction::eviction_number, a placement's placement_number.
    std::uint64_t number = 0;
    // An eviction handed to the eviction thread: its number there (0: issued here), and the event
    // it starts after. Its `done` means something only once the thread has issued it.
    std::uint32_t handed_over = 0;
    CUevent ready = nullptr;
    bool ahead = false;  // a placement copying blocks back ahead, on restore_stream_
  };
  // An eviction to wait for. Empty: none.
  struct EvictionRef {
    CUevent done = nullptr;
    std::uint32_t handed_over = 0;  // as in InFlight
    explicit operator bool() const { return done != nullptr; }
  };
  // What the program's thread does once mutex_ is released, before its operation goes on: waits
  // for the eviction thread and stream waits that need one, host waits, and copies of swapped
  // blocks back into managed memory (their slots detached, the moves they follow listed).
  struct HostWork {
    struct StreamWait {
      CUstream stream = nullptr;
      EvictionRef eviction;
    };
    std::vector<StreamWait> stream_waits;    // wait for the thread to issue it, then the stream waits
    std::vector<EvictionRef> host_waits;     // the host waits for these
    std::vector<CUstream> stream_syncs;      // ... and these streams
    std::vector<EvictionRef> before_copies;  // the moves in flight when the copy back was decided
    std::vector<BlockCopy> copies;           // copied back by the host after all of the above
    std::vector<void*> slots_to_free;        // given back once the waits are done
    bool empty() const {
      return stream_waits.empty() && host_waits.empty() && stream_syncs.empty() && copies.empty() &&
             slots_to_free.empty();
    }
  };
  // Runs `work` with no lock held, then gives its slots back under mutex_.
  void run(HostWork& work);
  // Before the host copies blocks back (their contents dropped on the GPU): each placed on the host
  // in one call, where the driver allows, and waited for.
  void place_on_host(const std::vector<BlockCopy>& copies);
  // mutex_, taken once no host copy-back is under way (swapped blocks another thread copies back
  // must hold their contents before any later operation runs or moves them); not owned once the
  // evictor has stopped.
  std::unique_lock<std::mutex> lock_settled();
  // Under mutex_: stop_placing's decisions, its copies back into `work`.
  void stop_placing_locked(HostWork& work) noexcept;
  // `stream` (the program's) waits for the eviction: now, if it is issued, else in `work`. An
  // error: the stream refused the wait, and the host waits for the eviction in `work` instead.
  CUresult wait_in_program_stream(CUstream stream, EvictionRef eviction, HostWork& work);
  // One of our streams waits for the eviction: the eviction thread must have issued it first.
  CUresult wait_in_own_stream(CUstream ours, EvictionRef eviction);
  // `ours` waits for the program's `stream` up to and including its operation `launch`: a progress
  // marker recorded after it, where one shows it (`by_marker`), else the stream's work so far
  // (kAllWork: always that).
  CUresult follow_program(CUstream ours, CUstream stream, std::uint64_t launch, bool& by_marker);
  static constexpr std::uint64_t kAllWork = UINT64_MAX;  // no marker is recorded after it
  // The discard stream waits for the earlier users of what the decision places (place_after_launch,
  // place_after_stream_work), in the program's `stream`.
  CUresult wait_for_placed_users(CUstream stream, const core::LaunchEviction& decision);
  bool finished(const InFlight& move) const;
  // Under mutex_: tells the model which evictions alongside the program have ended (their room is
  // free), asking only of the oldest in flight (they end in the order issued).
  void note_ended_evictions();

  // Decides with `decide(model, may_evict)` what must come before an operation enqueued in
  // `stream_id` at `host_time`, enqueues it, and does what the host must.
  template <typename Decide>
  Moves before_operation(std::uint64_t stream_id, std::uint64_t host_time, Decide&& decide) noexcept;
  // Under mutex_: enqueues what `decision` asks for before the operation, the host's part into `work`.
  Moves decide_and_issue(CUstream stream, std::uint64_t host_time, bool may_evict,
                         core::LaunchEviction decision, HostWork& work);
  // Enqueues the discard, the eviction, then the prefetch (a failure there leaves the launch to
  // fault its memory in, as without prefetching). False: what `decision` still holds was not
  // enqueued, and the model must restore it; a discard once enqueued moves to `discarded` either
  // way, and the launch (or, failing that, the host) waits for it.
  bool issue(CUstream stream, core::LaunchEviction& decision, std::uint64_t host_time,
             std::vector<core::AddressRange>& discarded, HostWork& work);
  // `room`: the evictions and discard (if any) the prefetch must wait for, the launch's own waits;
  // which eviction finishes last as in InFlight::waited_eviction.
  bool issue_prefetch(CUstream stream, core::LaunchEviction& decision, std::uint64_t host_time,
                      std::array<EvictionRef, 2> room, CUevent dropped, std::uint8_t waited_eviction);
  bool count_failure(CUresult r);  // counts (the first logged) an eviction refused; false
  // Enqueues decision.swap_out (copied into the store, then dropped) and decision.evict after
  // `after` (an event in the launch's stream), with `done` recorded after them: on the eviction
  // thread (after `ready`, non-null), else here. With wait_for_evict the launch's stream waits for
  // it (`evicted`). False: the driver refused, nothing was enqueued, and the events are back in
  // the pool.
  bool issue_eviction(CUstream stream, core::LaunchEviction& decision, std::uint64_t host_time, CUevent after,
                      CUevent done, CUevent ready, EvictionRef& evicted, HostWork& work);
  // A slot in the store for each block of decision.swap_out, into `copies`; blocks the store has
  // no free slot for move to decision.evict (written back by the driver).
  void take_slots(core::LaunchEviction& decision, std::vector<BlockCopy>& copies);
  // Enqueues on our eviction stream the copies into the store (from take_slots), then the drop of
  // `dropped` on the GPU. An error: nothing was dropped, and the slots are freed once the copies
  // are done.
  CUresult swap_out(const std::vector<BlockCopy>& copies, const std::vector<core::AddressRange>& dropped,
                    HostWork& work);
  // Enqueues on the discard stream, after a placement of `restore`, the copies back from the store.
  // An error: the host copies them all back itself (in `work`), after what was enqueued.
  // On `on` through `staging`: the launch's copies back on the discard stream, those ahead on the
  // restore stream.
  CUresult copy_back(const std::vector<core::AddressRange>& restore, HostWork& work, CUstream on,
                     const Staging& staging);
  // Copies swapped blocks back into managed memory on the host, after every move in flight (the
  // copies out among them): their slots detached now, the copies in `work`.
  void copy_back_on_host(const std::vector<core::AddressRange>& ranges, HostWork& work);
  // The slots of these blocks are free once every move issued so far is done (one may still copy
  // into or out of them).
  void release_after_moves(const std::vector<core::AddressRange>& ranges);
  // The same for the blocks the model released (their contents died, or their range was freed).
  void release_dead_slots() noexcept;
  // Enqueues the placement of decision.place on the discard stream, after the launch stream's work
  // so far and the evictions in `room`; the launch waits for it. A failure clears decision.place
  // (the launch faults those blocks in).
  void issue_placement(CUstream stream, core::LaunchEviction& decision, std::uint64_t host_time,
                       std::array<EvictionRef, 2> room, std::uint8_t waited_eviction, HostWork& work);
  // Enqueues decision.restore_ahead (placed, then copied back from the store) on the discard stream
  // after the evictions in `room` and those up to ahead_after_eviction; nothing of the program's
  // waits for it but the operations naming those blocks (after_placement). A failure leaves the
  // copies back to the host.
  void issue_restore_ahead(core::LaunchEviction& decision, std::uint64_t host_time,
                           std::array<EvictionRef, 2> room, HostWork& work);
  // With the log at trace level: what operation launches_decided() names and the moves decided.
  void log_decision(CUstream stream, const core::LaunchEviction& decision) const;
  // One cuMemDiscardAndPrefetchBatchAsync on `on`: `ranges` dropped and placed at `location`
  // without copying.
  CUresult discard_and_prefetch_to(const std::vector<core::AddressRange>& ranges, CUmemLocation location,
                                   CUstream on);
  // One cuMemDiscardBatchAsync on `on`: `ranges` dropped where they are.
  CUresult discard_where_they_are(const std::vector<core::AddressRange>& ranges, CUstream on);
  // The latest eviction not reaped yet numbered at most `number` (eviction_number); empty: none.
  EvictionRef eviction_up_to(std::uint64_t number) const;
  // Placements not reaped yet numbered at most `number` (placement_number): the latest on the
  // discard stream and the latest copy back ahead, which together cover the rest (each stream runs
  // its own in the order issued). nullptr: none there.
  std::array<CUevent, 2> placements_up_to(std::uint64_t number) const;
  std::array<CUevent, 2> every_placement_in_flight() const { return placements_up_to(UINT64_MAX); }
  // The latest discard not reaped yet (nullptr: none): the room a placement or a copy back ahead
  // takes may be its.
  CUevent discard_in_flight() const;
  struct MarkerRing {
    std::uint64_t stream = 0;  // its id (core::stream_id): each thread's per-thread stream apart
    std::array<CUevent, kMarkers> events{};
    // Each covers the operations below this: decided before it and enqueued when it was recorded.
    std::array<std::uint64_t, kMarkers> recorded_before{};
    std::size_t next = 0, count = 0;
    std::uint64_t launches = 0;
    std::uint64_t last_launch = 0;  // the stream's latest launch (see new_marker_ring)
  };
  // A ring for `stream` (an id) before launch `launch`: a new one, or past kMarkerStreams that of
  // a stream idle for a while; nullptr: none, or the driver refused its events.
  MarkerRing* new_marker_ring(std::uint64_t stream, std::uint64_t launch);
  // Every kMarkerInterval-th launch in `stream`, and the first after kMarkerInterval operations
  // elsewhere: a marker before launch `launch` (no-op otherwise), on the thread that launches it.
  void mark_progress(CUstream stream, std::uint64_t launch);
  // The earliest marker in `stream` recorded after launch `launch` was enqueued; nullptr: none.
  CUevent marker_after(CUstream stream, std::uint64_t launch) const;
  CUevent marker_after_id(std::uint64_t stream_id, std::uint64_t launch) const;  // by core::stream_id
  CUevent take_event();                // nullptr: kMaxEvents in flight, or the driver refused one
  CUevent take_event_or_count_busy();  // the same, a nullptr counted in skipped_busy()
  // Moves finished evictions to finished_ and their events back to the pool; under mutex_.
  void reap();
  // Under mutex_: forgets every stream and event of the context (it is being destroyed).
  void forget_context_handles();

  std::mutex mutex_;  // the model, the events, the markers, and the order of event records on our stream
  std::condition_variable restores_done_;  // host_restores_ fell to 0
  std::uint32_t host_restores_ = 0;        // program threads copying swapped blocks back (under mutex_)
  bool stopped_ = false;                   // under mutex_: stop() ran, every operation passes through
  std::vector<MarkerRing> markers_;        // at most kMarkerStreams
  // Operations decided whose driver calls have not returned, and, for the operation being decided,
  // the oldest of them (the model's set_enqueued_below; under mutex_).
  core::UnenqueuedOperations unenqueued_;
  std::uint64_t enqueued_below_ = 0;
  core::LaunchOrderedResidency model_;
  const bool
      follows_buffers_;  // the allocator's hand-outs and returns matter (discard_dead, place_fresh, swap)
  // Dead victims are dropped where they are, not placed on the host. Placing them there costs what
  // writing them back does, less the copy (the driver maps every 4 KiB host page). Left on the GPU,
  // a discarded 2 MB chunk is the first the driver reclaims under pressure, without a copy. The
  // room counts as freed only when nearly every way back is a placement (place_fresh), which costs the
  // same whether the driver reclaimed the chunk or not.
  std::atomic<bool> places_fresh_;   // place_fresh, until stop_placing()
  bool discard_in_place_;            // under mutex_
  CUstream stream_ = nullptr;        // evictions
  CUstream fetch_stream_ = nullptr;  // prefetches
  // Placements of fresh blocks and the copies back a launch waits for, each after the program's
  // work so far in the launch's stream.
  CUstream discard_stream_ = nullptr;
  // Discards of dead victims, each after its blocks' last users only; and the copies back ahead,
  // after no program work at all. Behind the discard stream's placements they waited for the
  // program's progress: a launch's copies back ahead stood still until the GPU reached it (BERT-large
  // copied nothing back in the first 150 ms of its backward at 2x). The discard stream where one
  // could not be made.
  CUstream drop_stream_ = nullptr;
  CUstream restore_stream_ = nullptr;
  CUevent program_done_ = nullptr;         // recorded in the launch's stream, waited for by ours
  bool stopped_for_other_device_ = false;  // under mutex_: stop_placing_for_other_device did

  CUdevice device_ = 0;
  std::vector<CUevent> free_events_;
  std::size_t events_created_ = 0;
  // In the order issued on our streams (reaped in that order: a move may wait for the ones issued
  // before it to be reaped).
  std::deque<InFlight> in_flight_;
  std::vector<Finished> finished_;
  std::uint64_t last_prefetch_end_ = 0;           // when the latest prefetch reaped finished
  std::array<std::uint64_t, 2> eviction_ends_{};  // when the latest two evictions reaped finished
  std::uint64_t last_discard_end_ = 0;            // when the latest discard reaped finished
  std::uint64_t placements_reaped_ = 0;           // the latest placement number reaped
  std::uint64_t last_placement_end_ = 0;          // when the latest placement reaped finished
  std::uint64_t last_ahead_end_ = 0;              // ... the latest copy back ahead
  // An event on our stream whose time on the caller's clock is known: the ends of evictions are
  // timed from it on the GPU's clock (the worker sees them up to milliseconds later, while the
  // next launch is already faulting memory in).
  CUevent anchor_ = nullptr;
  CUstream anchor_stream_ = nullptr;  // idle: the anchor is not queued behind evictions
  // Places blocks on the host before the host copies their contents back: a page the host writes
  // after a discard faults in one by one (0.6-0.9 GB/s; placed first, 3.5-4.5 GB/s).
  std::atomic<CUstream> host_place_stream_{nullptr};  // null once the context is gone
  Staging restore_staging_;  // the copies back from the store pass through it (the discard stream's)
  Staging ahead_staging_;    // ... and those ahead (the restore stream's)
  std::atomic<std::uint64_t> anchor_time_{0};  // 0: not set yet (written by the worker alone)
  std::uint64_t last_poll_ = 0;
  std::atomic<std::uint64_t> skipped_capturing_{0}, failures_{0}, skipped_busy_{0}, prefetch_failures_{0};
  std::atomic<std::uint64_t> held_by_value_waits_{0};
  std::atomic<std::uint64_t> evictions_after_marker_{0}, placements_after_marker_{0};
  std::atomic<std::uint64_t> swap_store_failed_{0};  // the first logs that swapping stopped
  std::atomic<std::uint64_t> swap_store_pin_ns_{0};
  std::array<std::atomic<std::uint64_t>, 4> enqueue_ns_{};  // by Move
  const std::uint64_t swap_store_bytes_;
  // Pinned swap slots kept free ahead of the swaps: two eviction batches.
  const std::uint64_t swap_reserve_bytes_;
  const bool swaps_;                      // swap was asked for (the model may stop on its own)
  std::unique_ptr<HostSwapStore> store_;  // with swaps_, made in create()
  struct SlotRelease {
    void* slot = nullptr;
    std::uint64_t after_moves = 0;  // free once this many moves have been reaped
  };
  std::deque<SlotRelease> releases_;
  std::uint64_t moves_reaped_ = 0;
  std::atomic<std::uint64_t> host_copy_back_ns_{0};
  std::atomic<std::uint64_t> copy_back_calls_ns_{0};  // copy_back()'s calls, within placements
  const bool wants_eviction_thread_;
  std::unique_ptr<EvictionThread> eviction_thread_;  // null: every eviction issued in the program's threads
  // Adds the host time from its construction to its end to enqueue_ns_[kind].
  class EnqueueTimer;
};

}  // namespace deepum::cuda
