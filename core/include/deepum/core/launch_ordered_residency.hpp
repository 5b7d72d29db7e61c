// LaunchOrderedResidency: what the GPU will hold once it has run every launch enqueued so far, and
// the evictions that keep that under the resident limit, decided on the program's thread at each
// launch, so the evictions can be ordered in the launch's stream before it.
//
// Why: CUPTI's migration records reach deepum 0.1-2 s after the GPU faulted the memory in (H100,
// GPT-2 at 2x and 3x), so a limit held from them overshoots it by 15-80%. A launch names its
// memory before the GPU runs it (its pointer arguments, each to the end of its tensor), and a
// stream runs in order: an eviction enqueued before a launch is done before that launch faults
// anything in. The model counts every 2 MB block a launch names as resident from then on (a
// superset of what the driver migrates: it faults in within the blocks touched) until deepum
// evicts it (in a block two allocations share, each part apart). A pointer names its tensor
// (KernelLaunch::extents), or where no size is known, the rest of its allocation. Pure C++; one lock, held by
// the caller across decision and issue.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "deepum/core/events.hpp"
#include "deepum/core/loop_period.hpp"
#include "deepum/core/residency_map.hpp"

namespace deepum::core {

// What the launch's stream must do before the launch.
struct LaunchEviction {
  // Wait for the evictions issued earlier up to this one (eviction_number numbering; they ran
  // alongside the program until now, and finish in the order issued). 0: none.
  std::uint64_t wait_for_eviction = 0;
  // Then move these to the host (in order after all the stream's earlier work).
  std::vector<AddressRange> evict;
  // A stream's operations up to and including `operation` (launches_decided numbering).
  struct StreamOperation {
    std::uint64_t stream = 0, operation = 0;
    bool operator==(const StreamOperation&) const = default;
  };
  // With swapping, where victims were named in other streams than this one (see
  // LaunchOrderedResidency::set_stream_follower): the eviction starts after these operations of
  // those streams too, each stream's latest that named one of the victims there.
  std::vector<StreamOperation> after_other_streams;
  // Wait for that eviction too before the launch; otherwise it runs alongside, and a later launch
  // waits for it (wait_for_eviction) once its room is needed.
  bool wait_for_evict = false;
  // The latest launch (LaunchOrderedResidency::launches_decided numbering) that named one of
  // `evict`, or, with `swap_out`, that may have reached one unnamed: the eviction may start as soon
  // as the stream has run it, not only this launch's predecessors.
  std::uint64_t evict_after_launch = 0;
  // With prefetching: what the launch names that was not resident, to move to the GPU after the
  // eviction (so into the room it makes), merged within each allocation; the launch waits for it.
  // Only when it all fits under the limit: a launch naming more faults in what it touches (a gather
  // over a large tensor touches a fraction of what it names).
  std::vector<AddressRange> fetch;
  // Some of `fetch` or `place` is being moved out by an eviction in flight (not waited for by the
  // launch): the move waits for the evictions up to this one, else it would arrive first and be
  // moved back. 0: none.
  std::uint64_t fetch_waits_for_eviction = 0;
  // With placing: what the launch names that is fresh (whole 2 MB blocks of a buffer the program's
  // allocator handed out, not named by any launch since) and not resident: made resident without
  // copying what the host holds (nothing the program wrote), after the block's earlier users
  // (place_after_launch), into the evictions' room; the launch waits for it. Counted with `fetch` against the
  // room, but placed even when the two do not fit (the launch writes these blocks, so faulting them in would
  // make them resident too).
  std::vector<AddressRange> place;
  // The latest eviction (eviction_number numbering) that moved one of `place` out: the placement
  // must not run beside it, whichever stream's launch asked for it.
  std::uint64_t place_after_eviction = 0;
  // The operation of the launch's stream that the earlier users of `place` come before, which the
  // placement follows as a discard does (discard_after_launch): where each block was taken back by
  // the allocator (or named, where later). PyTorch hands a block out again on the stream it was
  // taken back on, behind its users there, and on another only once its users have run. Not the
  // stream's work so far: the driver's placement call would hold the program's thread until the
  // GPU has run it. 0: no earlier user (never named since allocated). Swapped blocks copied back
  // (`restore`) follow their swap alone, as copies back ahead do.
  std::uint64_t place_after_launch = 0;
  // A block taken back on another stream than the launch's: the placement follows the launch
  // stream's work so far.
  bool place_after_stream_work = false;
  // This decision's own eviction's number (when `evict` is not empty): 1, 2, ... in decision order.
  std::uint64_t eviction_number = 0;
  // This decision's placement's number (when `place` is not empty), numbered alike.
  std::uint64_t placement_number = 0;
  // The latest earlier placement of a block this operation names: it must not run beside it (a
  // placement is ordered only before the launch that asked for it, and this one may be in another
  // stream). 0: none.
  std::uint64_t after_placement = 0;
  // The operation may reach memory it does not name (a truncated pointer list, an unknown layout,
  // a graph): it must wait for every placement still in flight.
  bool after_every_placement = false;
  // With discarding: victims whose contents are dead (in the program's allocator's cache, taken
  // back on this stream), dropped instead of written back. Nothing moves (a placement queued before
  // it may wait for an eviction): the launch always waits for it, so nothing the program does
  // later can run beside a discard.
  std::vector<AddressRange> discard;
  // With swapping: live victims (whole 2 MB blocks) copied into deepum's host store, then dropped
  // on the GPU, instead of moved by the driver (which maps every 4 KiB host page: 3-5x slower than
  // a copy). Part of this decision's eviction: same number, same waits.
  std::vector<AddressRange> swap_out;
  // Swapped blocks the operation names: placed and copied back from the store before it, with the
  // placement (placement_number), whether or not they fit under the limit (faulting them in would
  // read the dropped pages).
  std::vector<AddressRange> restore;
  // Every swapped block: the operation may reach memory it does not name, so each is copied back
  // into managed memory (on the host) before it, by the host.
  std::vector<AddressRange> unswap;
  // With a learned loop: swapped blocks the next operations are predicted to name, copied back
  // now into room that is free, so that they arrive while the GPU runs what comes before. The
  // operation does not wait for them; the first one naming a block waits for their placement
  // (ahead_placement_number, numbered as placement_number) through after_placement.
  std::vector<AddressRange> restore_ahead;
  std::uint64_t ahead_placement_number = 0;
  // The evictions, up to this one, that moved one of restore_ahead out or whose room it takes: the
  // placement runs after them.
  std::uint64_t ahead_after_eviction = 0;
  // The latest placement of a victim (evict or swap_out) that may still run: the eviction runs
  // after it (a block placed ahead may be taken before any operation named it).
  std::uint64_t evict_after_placement = 0;
  // The latest swap (eviction_number) that copied out and drops a block this operation names which
  // is no longer swapped (its buffer died and was handed out again): the operation must not run
  // beside that drop. 0: none.
  std::uint64_t after_drop = 0;
  // The latest eviction (eviction_number) that moved one of `discard` out: the discard must not run
  // beside it (a block faulted back in while that move was queued may die and be dropped; a drop
  // beside a move of the same memory is undefined). 0: none.
  std::uint64_t discard_after_eviction = 0;
  // The latest operation of the launch's stream that `discard`'s last users come before: where each
  // block was taken back by the allocator (or a later operation naming it). The discard need follow
  // only that, not the stream's work so far: copies back ahead wait for it (its room).
  std::uint64_t discard_after_launch = 0;
};

struct LaunchOrderedOptions {
  bool prefetch = false;      // decide LaunchEviction::fetch
  bool discard_dead = false;  // decide LaunchEviction::discard (on_buffer_returned, on_buffer_handed_out)
  // Decide LaunchEviction::place (with on_buffer_handed_out; new ranges start fresh). Sound only
  // when every write to a handed-out buffer is a launch, copy or memset naming it: a write deepum
  // does not see (a pointer kept in device memory, an uncounted 2-D copy) would be lost.
  bool place_fresh = false;
  // Evictions alongside the program at most in flight at once. Another starts once the room left
  // (theirs counted free) is under this many batches, or when copies back ahead take the room of
  // one in flight: the room stays that far ahead of the launches, so the link to the host has the
  // next eviction queued before a launch needs its room.
  std::uint32_t evictions_ahead = 1;
  // Decide LaunchEviction::swap_out/restore/unswap, for live victims up to swap_bytes at once.
  bool swap = false;
  std::uint64_t swap_bytes = 0;
  // Victims by predicted next use, furthest first, once the program's loop is learned (see
  // LaunchOrderedResidency::planning_period); least recently named where nothing is predicted.
  // Off: least recently named.
  bool victims_by_next_use = true;
  // With swapping and a learned loop: copy back ahead what the next operations name (restore_ahead),
  // looking no further than this many operations ahead.
  bool restore_ahead = true;
  std::uint32_t ahead_operations = 128;
  // With swapping and a learned loop: where the live bytes (ranges less what the allocator holds
  // dead) rose, within the next half step as one loop earlier, past what the limit leaves room for,
  // evict ahead of that peak, one eviction after the other as each ends (evictions_ended), taking
  // only victims predicted to be named after it: they are off the GPU at the peak anyway, and the
  // link to the host runs while the program computes instead of once its launches wait for room.
  bool room_for_peaks = true;
};

struct LaunchOrderedStats {
  std::uint64_t launches = 0;  // kernel launches, copies and memsets
  std::uint64_t copies = 0;    // copies and memsets among them
  std::uint64_t evictions = 0, evicted_bytes = 0;
  std::uint64_t waited_evictions = 0;  // the launch waited for it at once: the GPU stalled for it
  std::uint64_t waits_for_pending = 0;
  std::uint64_t peak_bytes = 0;           // the model at most, evictions in flight included
  std::uint64_t launches_over_limit = 0;  // named more than the limit leaves room for by itself
  // Launches given a fetch or a placement, and the bytes each moves, as decided (a move the driver
  // then refuses is still counted).
  std::uint64_t fetches = 0, fetched_bytes = 0;
  std::uint64_t fetch_skipped_bytes = 0;  // named, not resident, not fetched: more than the limit left
  std::uint64_t discarded_bytes = 0;      // victims dropped instead of written back
  std::uint64_t placed_bytes = 0;         // fresh blocks made resident without a copy
  std::uint64_t dead_returned_bytes = 0;  // whole blocks of buffers the allocator took back
  // Swapping: bytes copied out to the store, copied back before launches, copied back by the host
  // (and how often: operations that may reach memory they do not name), and the store at most.
  std::uint64_t swapped_out_bytes = 0, restored_bytes = 0, unswapped_bytes = 0, unswaps = 0;
  std::uint64_t swap_peak_bytes = 0;
  // Victims not swapped because another stream named them (a discard could run under its kernels),
  // or a pointer table holds them (a kernel may use them unnamed).
  std::uint64_t swap_skipped_other_stream_bytes = 0;
  // Victims swapped though other streams than the eviction's had named them: the swap was ordered
  // after those streams' users (LaunchEviction::after_other_streams).
  std::uint64_t swapped_after_other_streams_bytes = 0;
  // Resident blocks passed over as victims because an operation naming them was decided and not
  // enqueued yet (another thread's, inside its driver call), and swaps not decided because such an
  // operation may reach memory it does not name.
  std::uint64_t victims_unenqueued_blocks = 0, swaps_held_by_unenqueued = 0;
  // Blocks passed over as a waited eviction's spare room (what it frees beyond the launch's need,
  // so that evictions come once per batch): predicted to be named within half a loop, they would
  // come back before that room is used. Also, ahead of a predicted peak, live blocks predicted to be
  // named before it. Counted at each choice.
  std::uint64_t spare_victims_skipped_blocks = 0;
  // Evictions ahead of a predicted peak of live bytes (room_for_peaks), and what they moved.
  std::uint64_t peak_evictions = 0, peak_evicted_bytes = 0;
  // The loop's period in operations as last learned from repeated addresses (0: none); the period
  // of repeated shapes (a PyTorch step, whose activations move); the one planning used last (0:
  // none); and victims' bytes chosen by predicted next use and by least recent naming.
  std::uint64_t loop_period = 0, shape_loop_period = 0, planning_period = 0;
  // Of the 2 MB blocks named while a period was known, how many had been named exactly one
  // period earlier (the loop repeats its blocks, not only its shapes).
  std::uint64_t namings_checked = 0, namings_repeated = 0;
  std::uint64_t victims_predicted_bytes = 0, victims_unpredicted_bytes = 0;
  // Swapped blocks copied back ahead of the operation predicted to name them (restore_ahead).
  std::uint64_t restored_ahead_bytes = 0;
  // Operations of another device that named this model's memory (a copy between devices, a kernel
  // reading a peer's tensor), and the bytes of this model's blocks they named.
  std::uint64_t other_device_uses = 0, other_device_bytes = 0;
};

// The operations that named a block lately, oldest first. Those of the last period predict its
// next naming: the earliest of them, one period later. A block PyTorch's allocator hands to one
// tensor after another is named many times a step, so a few latest namings would not do.
class UseHistory {
 public:
  UseHistory() = default;
  // A moved-from history is empty (its ring back in the block).
  UseHistory(UseHistory&& other) noexcept { *this = std::move(other); }
  UseHistory& operator=(UseHistory&& other) noexcept;
  // Keeps the namings of the last `keep` operations, at most kMaxUses of them.
  void add(std::uint64_t now, std::uint64_t keep);
  // The earliest naming kept after operation `since`; 0: none.
  std::uint64_t first_after(std::uint64_t since) const;
  bool contains(std::uint64_t operation) const;
  // Whether a naming by `operation` is kept, where it named the block or came before the block's
  // first naming: the ring holds the latest namings, so it is unless older than the oldest kept (one
  // read, of the slot add() reads next).
  bool keeps_naming(std::uint64_t operation) const { return size_ != 0 && at(0) <= operation; }
  // Namings after `since` were dropped to keep kMaxUses: it is named often.
  bool dropped_after(std::uint64_t since) const { return dropped_ > since; }
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  static constexpr std::size_t kMaxUses = 256;

 private:
  // A ring, oldest first: in the block itself while it fits, so naming most blocks (a few
  // namings a period) touches no memory beside the block (the launch callback names every
  // block of every tensor); on the heap past that, its capacity doubled up to kMaxUses.
  static constexpr std::uint16_t kInline = 3;
  std::uint64_t* slots() { return heap_ ? heap_.get() : inline_; }
  const std::uint64_t* slots() const { return heap_ ? heap_.get() : inline_; }
  std::uint64_t at(std::size_t i) const;                        // the i-th oldest kept
  std::size_t first_not_before(std::uint64_t operation) const;  // index of the oldest >= it
  void pop_oldest();
  void grow();
  std::uint64_t inline_[kInline] = {};
  std::unique_ptr<std::uint64_t[]> heap_;
  std::uint16_t capacity_ = kInline, head_ = 0, size_ = 0;
  std::uint64_t dropped_ = 0;  // the latest naming dropped while still within `keep`
};

class LaunchOrderedResidency {
 public:
  // Evictions free at least `batch` below the limit, so they come once per batch, not per launch;
  // an eviction starts alongside the program once the model is within `batch` (times
  // options.evictions_ahead) of the limit. The batch shrinks to what the live ranges exceed the
  // limit by, where that is less.
  LaunchOrderedResidency(std::uint64_t limit_bytes, std::uint64_t batch_bytes,
                         LaunchOrderedOptions options = {})
      : limit_(limit_bytes), batch_(std::min(batch_bytes, limit_bytes / 2)), options_(options) {}

  void on_range_allocated(std::uint64_t address, std::uint64_t bytes);
  void on_range_freed(std::uint64_t address);  // the address it was allocated at
  // With discard_dead: the program's allocator took the buffer [address, address + bytes) back into
  // its cache on `stream` (after every use of it there was enqueued). The whole 2 MB blocks inside
  // it hold nothing the program can read while they stay in the cache.
  void on_buffer_returned(std::uint64_t address, std::uint64_t bytes, std::uint64_t stream);
  // The allocator handed a buffer out: every block it touches is live again (the program may write
  // it in ways no launch names: a 2-D copy, a pointer kept in device memory). With place_fresh, the
  // whole blocks inside it that were dead (or never named since allocated) are fresh until a launch
  // names them, or until an operation that may write memory it does not name (a truncated pointer
  // list, an unknown parameter layout, a graph, an undecoded copy) ends every block's freshness.
  void on_buffer_handed_out(std::uint64_t address, std::uint64_t bytes);
  // Counts what the launch names as resident and decides the evictions that must come before it.
  // `may_evict` false (the stream is being captured into a graph): counts only. `every`: all of
  // the launch's pointers where it holds more than KernelLaunch keeps (complete: none was lost).
  LaunchEviction before_launch(const KernelLaunch& launch, bool may_evict = true,
                               const LaunchPointers* every = nullptr);
  // The same for a copy or memset: its managed operands, `bytes` each.
  // `referenced`: managed pointers the copy carries from host memory to the GPU (a table of
  // pointers, such as PyTorch builds for its chunk_cat and split_with_sizes_copy kernels), each with
  // its extent. Kernels reach what they point to without naming it: those blocks are named here
  // (restored, their freshness ended) and never swapped until handed out again.
  LaunchEviction before_copy(const CopyLaunch& copy, bool may_evict = true,
                             const LaunchPointers* referenced = nullptr);
  // Every operation numbered below `operation` has been enqueued by its thread (its driver call
  // returned); those from it on may not be yet (see UnenqueuedOperations). Blocks they named are
  // no victims: a move ordered in a stream now would land before them. No swap is decided while
  // one of them may reach memory it does not name. Unset, every earlier operation counts enqueued.
  void set_enqueued_below(std::uint64_t operation) { enqueued_below_ = operation; }
  // Ends every block's freshness at once: an operation may have written memory it does not name.
  void forget_fresh() { ++fresh_epoch_; }
  // The same, and every swapped block must be copied back before the operation (it may read it):
  // returned, and no longer swapped.
  std::vector<AddressRange> forget_fresh_and_unswap();
  // Stops swapping (a copy back failed, or deepum cannot see every use of memory): every swapped
  // block is returned, to be copied back.
  std::vector<AddressRange> stop_swapping();
  // Every swapped block, no longer swapped, merged into ranges, for the caller to copy back (before
  // a stream capture, or at exit); swapping goes on afterwards.
  std::vector<AddressRange> unswap_all();
  // Swapped blocks whose store copy is no longer needed (their contents died, were freed, or were
  // placed fresh), taken once: the caller frees their store slots after the moves in flight.
  std::vector<AddressRange> take_released() { return std::exchange(released_, {}); }
  std::uint64_t swapped_bytes() const { return swapped_bytes_; }
  // The most the live ranges have exceeded the limit by: at least this much lives off the GPU at
  // that point of every step like it, so the swap store grows towards it ahead of the swaps.
  std::uint64_t peak_bytes_over_limit() const { return peak_over_limit_; }
  // The store had no room for these swap_out blocks: they are written back by the driver instead
  // (evicted, not swapped). `store_full`: it never will have (its limit reached, or pinning
  // failed), so no block is swapped out from now on; else it is still growing.
  void swap_refused(const std::vector<AddressRange>& blocks, bool store_full);
  // Places nothing from now on (deepum cannot see every write: a callback was refused).
  void stop_placing() {
    options_.place_fresh = false;
    forget_fresh();
  }
  // The eviction decided could not be enqueued: its blocks stay resident.
  void eviction_failed(const LaunchEviction& decision);
  // The evictions alongside the program numbered up to `number` (eviction_number) have ended on
  // the GPU: their room is free, and an operation taking it need not wait for them.
  void evictions_ended(std::uint64_t number);
  // The oldest eviction alongside the program still counted in flight (0: none).
  std::uint64_t oldest_pending_eviction() const { return pending_.empty() ? 0 : pending_.front().number; }

  // Lets swaps take blocks other streams named (a library's side streams: cuDNN's FFT convolutions
  // read weights on streams of their own), ordered after those streams' users: `can_follow(stream,
  // operation)` says whether a move can be ordered after that stream's operations up to and
  // including `operation` (the library: a progress marker recorded there since). Asked while a
  // decision is made; unset, such blocks are moved by the driver, which may fault them back in
  // under a kernel still using them but never drops them from under it.
  void set_stream_follower(std::function<bool(std::uint64_t stream, std::uint64_t operation)> can_follow) {
    can_follow_ = std::move(can_follow);
  }
  // Victims by the next use `next_use(address, now)` gives the block holding `address` (an
  // operation numbered as the model numbers them; 0: none), in place of the learned loop's
  // prediction, loop or not. For the simulator, which knows the trace's future: how far a perfect
  // predictor would take the same engine.
  void set_next_use_oracle(std::function<std::uint64_t(std::uint64_t address, std::uint64_t now)> next_use) {
    next_use_oracle_ = std::move(next_use);
  }

  // Whether any of `pointers` lies in a range this model holds.
  bool holds_any(const std::uint64_t* pointers, std::size_t count) const;
  // An operation of another device names [pointers[i], pointers[i] + extents[i]) (extent 0: to the
  // end of the allocation). Nothing of this model's is ordered before it, so the blocks it names
  // here end their freshness and are never swapped until handed out again (Block::indirect); those
  // swapped come back. Counts nothing resident: the other device reaches them where they are.
  struct OtherDeviceUse {
    std::vector<AddressRange> unswap;   // no longer swapped: the caller copies them back first
    std::uint64_t after_placement = 0;  // the latest placement of one of them (placement_number)
  };
  OtherDeviceUse named_by_other_device(const std::uint64_t* pointers, const std::uint64_t* extents,
                                       std::size_t count);
  std::uint64_t resident_bytes() const { return resident_bytes_; }
  // Launches, copies and memsets decided so far: the last one decided is number launches_decided().
  std::uint64_t launches_decided() const { return launch_seq_; }
  std::uint64_t pending_bytes() const { return pending_bytes_; }
  // What the operation decided last named, merged within each allocation (for the move log).
  std::vector<AddressRange> last_named() const;
  const LaunchOrderedStats& stats() const { return stats_; }
  // The shortest loop of shapes planned with: a step, not a run of identical layers inside one.
  static constexpr std::uint64_t kMinShapePeriod = 256;
  // The operations of history kept before a loop is learned (a longer loop is predicted from its
  // second period on).
  static constexpr std::uint64_t kMinHistory = 4096;
  // After an eviction ahead of a peak found no victims (every live resident block is named before
  // the peak), up to this many operations pass before it looks again (a sixteenth of the loop at
  // most): each look orders every resident block by its next use, about a millisecond with ten
  // thousand of them, and a stretch that names only blocks it keeps (a checkpointed backward)
  // would pay it at every launch.
  static constexpr std::uint64_t kPeakRetryOperations = 32;

 private:
  // A range's part of one 2 MB block (a block two ranges share has a part in each). Kept per range
  // in a vector, so a launch's tensor is one map lookup and a walk over consecutive parts: the
  // launch callback runs this on every launch.
  struct Range;
  using LruEntry = std::pair<Range*, std::size_t>;  // (range, index of the part)
  // Fields in the order of how often a launch touches them: those every naming reads or writes
  // first, in two cache lines with the history's ring while it fits, the rest after them.
  struct Block {
    // The launch that named it last; for a block a pointer table held, at least the latest operation
    // decided before it was handed out again (a kernel may have reached it through the table).
    std::uint64_t named_at = 0;
    std::uint64_t named_stream = 0;  // ... in this stream
    // Nothing the program wrote: allocated or handed out whole (see on_buffer_handed_out), not named
    // since, and no unnamed write since (fresh while equal to fresh_epoch_).
    std::uint64_t fresh_epoch = 0;
    std::uint64_t placed_by = 0;  // the placement (placement_number) that made it resident last
    std::list<LruEntry>::iterator lru;
    bool resident = false;
    // Contents dead: the buffer holding the whole block was taken back on `dead_stream`, and none
    // has been handed out over it since.
    bool dead = false;
    // Named in more than one stream since it became resident, or in another stream than users a
    // move took it out before (unfollowed): a move ordered in one stream may run beside a kernel of
    // another still using it.
    bool other_streams = false;
    // The move that took it out last did not follow all its users: those of unfollowed_stream
    // (one_stream), or of streams unknown (any: several, or a pointer table's kernels). Until the
    // allocator hands it out again (PyTorch reuses a block only after its users in other streams
    // have run), a naming in another stream than theirs counts as one in two streams.
    enum class Unfollowed : std::uint8_t { none, one_stream, any } unfollowed = Unfollowed::none;
    // Its address reached the GPU in a pointer table (before_copy's `referenced`) since it was last
    // handed out: a kernel may read or write it unnamed.
    bool indirect = false;
    // Its contents are in deepum's host store (see LaunchEviction::swap_out), not in managed memory.
    bool swapped = false;
    bool ahead = false;        // copied back ahead (restore_ahead), not named since
    bool others_lost = false;  // see `others`
    UseHistory uses;
    std::uint64_t dead_stream = 0;
    std::uint64_t dead_at = 0;     // the latest operation decided when it was taken back
    std::uint64_t evicted_by = 0;  // the eviction (eviction_number) that moved it out last
    std::uint64_t swapped_by = 0;  // ... that swapped it out (copied, then dropped it) last
    std::uint64_t unfollowed_stream = 0;
    // Namings in streams other than named_stream since the block was last handed out whole, the
    // latest per stream (for a swap to follow them), up to three streams; past that,
    // `others_lost`, and a swap follows none of them.
    std::array<LaunchEviction::StreamOperation, 3> others{};
  };
  struct Range {
    std::uint64_t address = 0, bytes = 0;
    std::vector<Block> blocks;  // by block, from the one holding `address`; never resized
  };
  static AddressRange part(const Range& range, std::size_t index);
  // A move ordered in `stream` takes the block out: which of its users it does not follow.
  static void unfollowed_by_move(Block& block, std::uint64_t stream);
  // A naming in `stream` beside users no move has followed, of another stream or unknown ones.
  static bool named_beside_unfollowed(const Block& block, std::uint64_t stream);
  // Marks the blocks [pointer, pointer + extent) names (extent 0: to the end of its allocation) as
  // named by `now` in `stream`, into named_; returns the bytes among them not resident yet.
  std::uint64_t name(std::uint64_t pointer, std::uint64_t extent, std::uint64_t now, std::uint64_t stream);
  // For named_fresh_: where a fresh block's earlier users come before, named now in `stream`.
  std::uint64_t fresh_users_before(const Block& block, std::uint64_t stream) const;
  bool naming_indirect_ = false;  // name() marks the blocks it names Block::indirect
  // Starts an operation's naming: clears the scratch; with `unnamed` (it may reach memory it does
  // not name) or not `may_evict` (with swapping), returns the swapped blocks to copy back first.
  std::vector<AddressRange> begin_naming(bool unnamed, bool may_evict);
  // A swapped block's store copy is not needed any more.
  void release_swapped(Range& range, std::size_t index);
  // Calls `each(range, index)` for every part of a live range that `ranges` cover.
  template <typename Each>
  void for_each_part(const std::vector<AddressRange>& ranges, Each&& each);
  // The swapped blocks among `blocks` hold their contents on the GPU after all (not copied out).
  void unmark_swapped(const std::vector<AddressRange>& blocks);
  // The block is named in `stream`: its naming in another stream so far joins `others`.
  static void note_other_streams(Block& block, std::uint64_t stream);
  // Whether a swap in `stream` can follow every user of the block in other streams, listed into
  // `users` (each stream's latest naming).
  bool follow_other_streams(const Block& block, std::uint64_t stream,
                            std::vector<LaunchEviction::StreamOperation>& users) const;
  // Counts named_ as resident and decides what must be evicted before them, in `stream`.
  LaunchEviction decide(std::uint64_t new_bytes, std::uint64_t now, std::uint64_t stream, bool may_evict);
  // What an eviction frees: the batch, or less where the live ranges exceed the limit by less.
  std::uint64_t eviction_batch() const;
  // The non-resident named parts to fetch, if they fit in the room left under the limit.
  void plan_fetch(LaunchEviction& decision);
  // The range holding `address`, or nullptr.
  Range* range_holding(std::uint64_t address);
  const Range* range_holding(std::uint64_t address) const;
  // The first and last parts of `range` that [pointer, pointer + extent) covers (extent 0: to the
  // end of the allocation, which is the buffer itself for a program calling cudaMalloc per buffer);
  // `pointer` lies in `range`.
  static std::pair<std::size_t, std::size_t> parts_spanned(const Range& range, std::uint64_t pointer,
                                                           std::uint64_t extent);
  void make_resident(Range& range, std::size_t index);
  void make_evicted(Range& range, std::size_t index);
  // Resident parts not named by launch `now`, covering `bytes`: dead ones freed on `stream` first
  // (into `discard`), then the least recently named (into `evict`); merged into address ranges
  // within one allocation each.
  // Past `needed` bytes (dead blocks aside), only parts not predicted to be named by operation
  // `spare_after` are taken. `live_only`: no dead parts, nor parts with no predicted use.
  void choose_victims(std::uint64_t bytes, std::uint64_t now, std::uint64_t stream, LaunchEviction& decision,
                      std::uint64_t needed = UINT64_MAX, std::uint64_t spare_after = 0,
                      bool live_only = false);
  // Parts predicted to be named by this operation are no waited eviction's spare room: half a loop
  // on, where the loop is longer than the copies back's lookahead (0: any part may be).
  std::uint64_t spare_after(std::uint64_t now) const;
  // The operation after `now` expected to name the block, one loop `period` after a naming of it
  // (0: none expected: no period learned, or the block missed its predicted naming).
  static std::uint64_t predicted_next_use(const Block& block, std::uint64_t now, std::uint64_t period);
  // The loop's period that planning uses (0: none): the one learned (learned_period), once the
  // history covers it; until then, the one learned before.
  std::uint64_t planning_period() const;
  // The loop of addresses, else the loop of shapes where the blocks repeat with it too (a PyTorch
  // step: its tensors move within the allocator's segments, its 2 MB blocks are named at the same
  // points of each step).
  std::uint64_t learned_period() const;
  // Operations back that the histories hold at `now`: what they kept when history_length last
  // grew, and every operation since, up to history_length.
  std::uint64_t history_covered(std::uint64_t now) const;
  // Resident parts in the order victims are taken: least recently named first; with a learned
  // loop, those with no predicted use first (least recently named first), then by predicted next
  // use, furthest first.
  // `unpredicted`: how many lead the order unpredicted. Parts `now` names are left out.
  std::vector<LruEntry> victim_order(std::uint64_t bytes, std::uint64_t now, std::size_t& unpredicted);
  // Counts operation `now`, by its signatures, for the loop's period.
  void observe(std::uint64_t now, std::uint64_t by_address, std::uint64_t by_shape);
  // Operations of history kept to predict from: the longest period learned so far, at least a few
  // thousand (it never shrinks: a loop that goes back to a longer period finds its history).
  std::uint64_t history_length() const;
  // Before operation `now` names its blocks: what record_use needs, worked out once.
  void begin_recording(std::uint64_t now);
  // Operation `now` names the block (part `index` of `range`, the next of named_): kept in its
  // history, and counted for blocks_repeat_.
  void record_use(Block& block, const Range& range, std::size_t index, std::uint64_t now);
  // Whether that block's history holds a naming by `operation`, one loop of shapes ago.
  bool named_one_loop_ago(const Block& block, const Range& range, std::size_t index,
                          std::uint64_t operation) const;

  // Keeps what operation `now` named (named_), for predicting the operation one period later.
  void remember_named(std::uint64_t now);
  // Whether the next operation not yet planned for is predicted to name blocks not resident (true
  // where nothing is predicted, or the loop repeats shapes but not addresses): an eviction ahead
  // makes room only for what is coming.
  bool upcoming_needs_room(std::uint64_t now) const;
  // Decides restore_ahead: the swapped blocks of the operations after `now`, as the same operations
  // one period earlier named them, in order, while they fit in the room free under the limit.
  void plan_ahead(LaunchEviction& decision, std::uint64_t now);
  // Whether a batch should start out alongside the program, `held` bytes resident.
  bool wants_eviction_ahead(std::uint64_t held, std::uint64_t now, std::uint64_t ahead) const;
  // Chooses a batch of victims into `decision` and counts it pending.
  void evict_ahead(std::uint64_t batch, std::uint64_t now, std::uint64_t stream, LaunchEviction& decision);
  // Whether eviction `number` runs alongside the program, not waited for yet.
  bool pending(std::uint64_t number) const;
  // Live bytes that must be off the GPU at the predicted peak within the next half step (half the
  // loop, or of its loop of shapes where the loop spans several), past those off it now (0: none
  // predicted); `peak_at`: that peak's operation.
  std::uint64_t room_short_at_peak(std::uint64_t now, std::uint64_t& peak_at);
  // An eviction ahead of that peak, while none is in flight (see LaunchOrderedOptions::room_for_peaks).
  void evict_for_peak(std::uint64_t now, std::uint64_t stream, LaunchEviction& decision);
  // A block turns dead or live (on_buffer_returned, on_buffer_handed_out, on_range_freed).
  void set_dead(Range& range, std::size_t index, bool dead);
  // After live bytes grew (a range allocated, a buffer handed out): the peak over the limit.
  void note_live_bytes();

  std::uint64_t limit_, batch_;
  LaunchOrderedOptions options_;
  std::function<bool(std::uint64_t, std::uint64_t)> can_follow_;                // see set_stream_follower
  std::function<std::uint64_t(std::uint64_t, std::uint64_t)> next_use_oracle_;  // see set_next_use_oracle
  std::map<std::uint64_t, Range> ranges_;  // live managed ranges, by address (nodes never move)
  // 2 MB blocks that lie wholly in one live range, by block number modulo the slots: a launch's
  // pointers fall mostly in a few ranges, and each map lookup walks a dozen nodes that the program's
  // own work between launches has pushed out of the caches. Emptied whenever a range comes or goes.
  struct RangeOfBlock {
    BlockId block = ~BlockId{0};
    Range* range = nullptr;
  };
  std::array<RangeOfBlock, 256> range_of_block_{};
  std::list<LruEntry> lru_;  // resident parts, least recently named first
  LoopPeriod loop_by_address_, loop_by_shape_;
  // Whether the blocks named lately were named one loop of shapes earlier, mostly (see
  // planning_period): of the latest namings counted (halved every kRepeatWindow), how many were.
  static constexpr std::uint64_t kRepeatWindow = 8192;
  std::uint64_t repeats_period_ = 0, repeats_checked_ = 0, repeats_hit_ = 0;
  bool blocks_repeat_ = false;
  // For the operation being named (begin_recording): the history kept, and the loop of shapes its
  // namings are checked against (0: none).
  std::uint64_t recording_keep_ = kMinHistory, checking_period_ = 0;
  std::uint64_t covered_period_ = 0;  // the latest period learned that the history covered
  // The longest period learned so far (history_length), when the history last grew, and how many
  // operations back it held then.
  std::uint64_t longest_period_ = 0, history_grown_at_ = 0, covered_at_growth_ = 0;
  // What each of the latest operations (about a period of them) named.
  struct NamedPart {
    std::uint64_t address = 0;  // the range's
    std::uint32_t index = 0;
    bool operator==(const NamedPart&) const = default;
  };
  struct NamedBy {
    std::uint64_t operation = 0;
    std::vector<NamedPart> parts;
    std::uint64_t live_bytes = 0;  // range_bytes_ - dead_bytes_ once it was decided
  };
  std::deque<NamedBy> named_history_;
  // For the operation being named: what the one a loop of shapes earlier named (see
  // named_one_loop_ago); null where the history does not hold it.
  const std::vector<NamedPart>* named_loop_ago_ = nullptr;
  static constexpr std::size_t kPartsLookedThrough = 32;
  std::uint64_t planned_ahead_to_ = 0;  // the latest operation whose blocks plan_ahead considered
  // Blocks copied back ahead and not named yet: at most a batch, so that what comes back ahead is
  // what the next operations need, not what a later one does at the cost of what is kept.
  std::uint64_t ahead_unnamed_bytes_ = 0;
  // The latest eviction whose room the model counts free (a launch waits for it): evictions finish
  // in order, so its end frees every room counted.
  std::uint64_t room_freed_by_ = 0;
  std::uint64_t resident_bytes_ = 0;
  // Every live range's bytes: while they fit under the limit, nothing ever has to leave, so no
  // eviction is made ahead (at exactly the footprint, an LRU batch would evict what a loop needs next).
  std::uint64_t range_bytes_ = 0;
  // Whole blocks returned to the allocator (Block::dead), and those of them resident.
  std::uint64_t dead_bytes_ = 0, resident_dead_bytes_ = 0;
  // The largest live bytes over a sliding span of named_history_ (room_short_at_peak): (operation,
  // live bytes), falling, oldest first; entries up to `peak_scanned_to_` were considered.
  std::deque<std::pair<std::uint64_t, std::uint64_t>> peak_window_;
  std::uint64_t peak_scanned_to_ = 0, peak_period_ = 0, peak_reach_ = 0;
  std::uint64_t peak_retry_at_ = 0;  // no eviction for a peak before this operation (see above)
  // Evictions alongside the program not waited for yet, oldest first, and the bytes they move.
  struct PendingEviction {
    std::uint64_t number = 0, bytes = 0;
  };
  std::deque<PendingEviction> pending_;
  std::uint64_t pending_bytes_ = 0;
  std::uint64_t launch_seq_ = 0;
  std::uint64_t fresh_epoch_ = 1;                 // blocks start at 0: not fresh
  std::uint64_t evictions_decided_ = 0;           // LaunchEviction::eviction_number of the latest
  std::uint64_t placements_decided_ = 0;          // LaunchEviction::placement_number of the latest
  std::uint64_t placements_before_decision_ = 0;  // placements_decided_ as the current decision began
  std::uint64_t named_after_placement_ = 0;       // scratch: the latest placed_by among named_
  std::uint64_t named_after_drop_ = 0;            // scratch: see LaunchEviction::after_drop
  std::uint64_t swapped_bytes_ = 0;               // blocks whose contents are in the store
  std::uint64_t peak_over_limit_ = 0;             // see peak_bytes_over_limit
  std::vector<AddressRange> released_;            // see take_released
  // The operation being decided may reach memory it does not name: its victims are not swapped.
  bool unnamed_now_ = false;
  // The latest such operation in each stream: a later swap there starts after it, whatever its
  // victims' last namings (it may have read or written them; a copy out beside it would be stale).
  // One in another stream orders nothing here (swaps take blocks named in one stream only).
  std::map<std::uint64_t, std::uint64_t> unnamed_at_;
  std::uint64_t latest_unnamed_ = 0;           // the latest such operation in any stream
  std::uint64_t enqueued_below_ = UINT64_MAX;  // see set_enqueued_below
  bool fresh(const Block& block) const { return block.fresh_epoch == fresh_epoch_; }
  std::vector<LruEntry> named_;  // scratch, kept to avoid allocating per launch
  // Per named_ entry, when fresh as named: the operation of the launch's stream its earlier users
  // come before (see LaunchEviction::place_after_launch), kUsersInAnotherStream, or kNotFresh.
  std::vector<std::uint64_t> named_fresh_;  // scratch
  static constexpr std::uint64_t kNotFresh = ~std::uint64_t{0}, kUsersInAnotherStream = kNotFresh - 1;
  LaunchOrderedStats stats_;
};

}  // namespace deepum::core
