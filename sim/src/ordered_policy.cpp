#include "deepum/sim/ordered_policy.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "deepum/core/event_pipeline.hpp"

namespace deepum::sim {

namespace {
constexpr std::uint64_t kBlock = core::kBlockBytes;

std::uint64_t bytes_of(const std::vector<core::AddressRange>& ranges) {
  std::uint64_t total = 0;
  for (const core::AddressRange& range : ranges) total += range.bytes;
  return total;
}

double gib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / static_cast<double>(std::uint64_t{1} << 30);
}
}  // namespace

void OrderedPolicy::begin(Executor& executor) {
  const Workload& w = executor.workload();
  workload_ = &w;
  if (w.operands.empty()) {
    throw std::invalid_argument(
        "deepum-ordered replays the operands of every launch and the allocator's buffers, which this trace "
        "lacks: record it with deepum of trace format 1.4 or later (trace_file)");
  }
  const std::uint64_t capacity = executor.capacity_blocks() * kBlock;
  limit_bytes_ = options_.limit_bytes != 0 ? std::min(options_.limit_bytes, capacity) : capacity;
  core::PipelineOptions library;  // the library's batch for this limit
  library.resident_limit_bytes = limit_bytes_;
  core::LaunchOrderedOptions moves = options_.moves;
  if (moves.swap && moves.swap_bytes == 0) moves.swap_bytes = w.footprint_bytes();
  model_.emplace(limit_bytes_, library.launch_ordered_batch(), moves);
  // The simulator runs one stream, so a swap follows every earlier operation: blocks the trace's
  // other streams named are swapped, as the library does once its markers show their users.
  model_->set_stream_follower([](std::uint64_t, std::uint64_t) { return true; });
  if (options_.true_next_use) {
    times_ = block_times(w);
    model_->set_next_use_oracle(
        [this](std::uint64_t address, std::uint64_t now) { return true_next_use(address, now); });
  }
  next_event_ = 0;
  host_ = 0;
  discard_stream_free_ = drop_stream_free_ = restore_stream_free_ = 0;
  operation_kernel_.assign(1, kNoKernel);
  kernel_end_.assign(w.kernels.size(), 0);
  eviction_thread_free_ = 0;
  thread_in_calls_ns_ = 0;
  eviction_done_.assign(1, 0);
  eviction_issued_.assign(1, 0);
  placement_done_.assign(1, 0);
}

std::span<const BlockIndex> OrderedPolicy::blocks_of(const std::vector<core::AddressRange>& ranges) {
  blocks_.clear();
  const std::vector<core::BlockId>& ids = workload_->block_ids;
  for (const core::AddressRange& range : ranges) {
    if (range.bytes == 0) continue;
    // Blocks no operation touches are not in the workload: nothing of theirs costs anything.
    auto it = std::lower_bound(ids.begin(), ids.end(), core::block_of(range.address));
    for (; it != ids.end() && *it <= core::block_of(range.address + range.bytes - 1); ++it)
      blocks_.push_back(static_cast<BlockIndex>(it - ids.begin()));
  }
  return blocks_;
}

Nanoseconds OrderedPolicy::done_by(const std::vector<Nanoseconds>& done, std::uint64_t number) {
  return number < done.size() ? done[number] : 0;
}

void OrderedPolicy::wait_issued(const MachineModel& m, std::initializer_list<std::uint64_t> numbers) {
  if (!m.swap_room_waits_for_copies) return;
  for (std::uint64_t number : numbers) host_ = std::max(host_, done_by(eviction_issued_, number));
}

void OrderedPolicy::set_done(std::vector<Nanoseconds>& done, std::uint64_t number, Nanoseconds at) {
  if (number == 0) return;
  if (done.size() <= number) done.resize(number + 1, 0);
  done[number] = at;
}

void OrderedPolicy::set_placed(std::uint64_t number, Nanoseconds at) {
  // Numbered in the order issued: what waits for one waits, as the library does, for the latest
  // up to it on each of the two streams, so for every one up to it.
  if (number == 0) return;
  if (placement_done_.size() <= number) placement_done_.resize(number + 1, placement_done_.back());
  placement_done_[number] = std::max(at, placement_done_[number - 1]);
}

std::uint64_t OrderedPolicy::true_next_use(std::uint64_t address, std::uint64_t now) const {
  const std::vector<core::BlockId>& ids = workload_->block_ids;
  const auto it = std::lower_bound(ids.begin(), ids.end(), core::block_of(address));
  if (it == ids.end() || *it != core::block_of(address)) return 0;  // no operation names it
  const std::uint32_t next = times_.next_use(static_cast<BlockIndex>(it - ids.begin()), deciding_);
  // The model numbers only the operations it decides: the distance counts every one, which keeps
  // the order of the blocks' next uses.
  return next == BlockTimes::kNever ? 0 : now + (next - deciding_);
}

void OrderedPolicy::note_ended_evictions() {
  for (std::uint64_t number = model_->oldest_pending_eviction(); number != 0;
       number = model_->oldest_pending_eviction()) {
    if (number >= eviction_done_.size() || eviction_done_[number] > host_) return;
    model_->evictions_ended(number);
  }
}

std::optional<core::LaunchEviction> OrderedPolicy::decide(std::uint32_t k, const Workload& w) {
  deciding_ = k;
  const StepOperands& step = w.operands[k];
  if (!step.known) return std::nullopt;
  note_ended_evictions();
  const KernelStep& kernel = w.kernels[k];
  if (kernel.operation == core::GpuOperation::kernel) {
    core::KernelLaunch launch;
    launch.correlation_id = kernel.correlation_id;
    launch.execution_key = kernel.execution_key;
    launch.function = kernel.function;
    launch.grid = kernel.grid;
    launch.block = kernel.block;
    launch.stream = step.stream;
    launch.unnamed_memory = step.unnamed_memory;
    const std::size_t kept = std::min<std::size_t>(step.count, core::KernelLaunch::kMaxPointers);
    launch.pointer_count = static_cast<std::uint16_t>(kept);
    launch.pointers_truncated = step.count > kept || !step.complete;
    for (std::size_t i = 0; i < kept; ++i) {
      launch.pointers[i] = w.operand_addresses[step.first + i];
      launch.extents[i] = w.operand_extents[step.first + i];
    }
    if (step.count <= kept) return model_->before_launch(launch);
    core::LaunchPointers every;
    every.pointers = w.operand_addresses.data() + step.first;
    every.extents = w.operand_extents.data() + step.first;
    every.count = step.count;
    every.complete = step.complete;
    return model_->before_launch(launch, true, &every);
  }
  core::CopyLaunch copy;
  copy.correlation_id = kernel.correlation_id;
  copy.stream = step.stream;
  copy.operation = kernel.operation;
  copy.unnamed_memory = step.unnamed_memory;
  copy.bytes = step.copy_bytes;
  copy.operand_count =
      static_cast<std::uint16_t>(std::min<std::size_t>(step.count, core::CopyLaunch::kMaxOperands));
  for (std::uint16_t o = 0; o < copy.operand_count; ++o)
    copy.operands[o] = w.operand_addresses[step.first + o];
  if (copy.unnamed_memory) {
    // Nothing to order before it (the library forgets freshness and moves nothing).
    model_->forget_fresh();
    return std::nullopt;
  }
  return model_->before_copy(copy);
}

void OrderedPolicy::before_kernel(std::uint32_t k, Executor& executor) {
  const Workload& w = executor.workload();
  for (; next_event_ < w.host_events.size() && w.host_events[next_event_].before_kernel <= k; ++next_event_) {
    const HostEvent& event = w.host_events[next_event_];
    switch (event.kind) {
      case HostEvent::Kind::range_allocated:
        model_->on_range_allocated(event.address, event.bytes);
        break;
      case HostEvent::Kind::range_freed:
        model_->on_range_freed(event.address);
        break;
      case HostEvent::Kind::buffer_handed_out:
        model_->on_buffer_handed_out(event.address, event.bytes);
        break;
      case HostEvent::Kind::buffer_returned:
        model_->on_buffer_returned(event.address, event.bytes, event.stream);
        break;
    }
  }
  Nanoseconds start = 0;
  std::optional<core::LaunchEviction> decision = decide(k, w);
  // The model numbers the operations it decides: a discard follows the end of one of them.
  if (const std::uint64_t n = model_->launches_decided(); n >= operation_kernel_.size()) {
    operation_kernel_.resize(n + 1, kNoKernel);
    operation_kernel_[n] = k;
  }
  if (decision) start = carry_out(*decision, executor);
  // The thread's own time for the operation: as traced, else the machine's figure.
  const std::uint64_t traced = w.kernels[k].host_gap_ns;
  host_ += traced != 0 ? traced : us_to_ns(executor.machine().launch_us);
  executor.hold_kernel_until(std::max(host_, start));
}

void OrderedPolicy::after_kernel(std::uint32_t k, Executor& executor) {
  kernel_end_[k] = executor.now();
  if (executor.workload().kernels[k].copies_to_host()) host_ = std::max(host_, executor.now());
}

Nanoseconds OrderedPolicy::carry_out(core::LaunchEviction& d, Executor& executor) {
  const MachineModel& m = executor.machine();
  // The launch's stream has run everything enqueued before this operation once the previous one
  // ended (the simulator runs one stream).
  const Nanoseconds stream_so_far = executor.now();
  Nanoseconds start = done_by(eviction_done_, d.wait_for_eviction);
  wait_issued(m, {d.wait_for_eviction});

  if (!d.unswap.empty()) {
    // Copied back by the host once every move in flight is done.
    const Nanoseconds all_moved =
        std::max(*std::max_element(eviction_done_.begin(), eviction_done_.end()), placement_done_.back());
    host_ = std::max(host_, all_moved) + transfer_ns(bytes_of(d.unswap), m.copy_h2d_gb_per_s);
  }
  if (!d.discard.empty()) {
    // Dead victims dropped on the drop stream after their last users (the operation each was taken
    // back at) and the copies back ahead issued before; the launch waits for it.
    wait_issued(m, {d.discard_after_eviction});
    const Nanoseconds dropped =
        occupy_stream(m,
                      std::max({users_done(d.discard_after_launch, stream_so_far), drop_stream_free_,
                                restore_stream_free_, done_by(eviction_done_, d.discard_after_eviction)}),
                      us_to_ns(m.discard_call_us) + transfer_ns(bytes_of(d.discard), m.discard_gb_per_s),
                      drop_stream_free_);
    start = std::max(start, executor.drop(blocks_of(d.discard), dropped));
  }
  Nanoseconds evicted = 0;
  if (!d.swap_out.empty() || !d.evict.empty()) {
    // After a victim's placement ahead, if it is still arriving.
    const Nanoseconds after_placement = done_by(placement_done_, d.evict_after_placement);
    Nanoseconds swapped = std::max(host_, after_placement);  // copied out and dropped
    if (!d.swap_out.empty()) {
      const std::span<const BlockIndex> blocks = blocks_of(d.swap_out);
      host_ += us_to_ns(m.copy_call_us) * (bytes_of(d.swap_out) / kBlock) + us_to_ns(m.discard_call_us);
      // The eviction thread takes swaps one at a time: it starts this one's copies once it has
      // dropped the one before.
      const Nanoseconds begins = std::max({host_, after_placement, eviction_thread_free_});
      const Nanoseconds copied = executor.write_back(blocks, begins, m.copy_d2h_gb_per_s, true);
      // Then it waits for the copies and drops the blocks, nothing else of its running: the
      // eviction's event comes after the drop (1.6 GB took 6 ms on an H200, GPT-2 124M's logits'
      // room).
      swapped = copied + us_to_ns(m.discard_call_us) + transfer_ns(bytes_of(d.swap_out), m.discard_gb_per_s);
      eviction_thread_free_ = swapped;
      if (m.swap_holds_thread) host_ = std::max(host_, swapped);
      set_done(eviction_issued_, d.eviction_number, swapped);
    }
    Nanoseconds moved = swapped;
    if (!d.evict.empty()) {
      const std::span<const BlockIndex> blocks = blocks_of(d.evict);
      // The driver moves memory to the host in the calling thread when the stream has nothing
      // left to wait for (um_move_probe: d2h on an idle stream returns when done, behind a
      // kernel at once): the victims' last users have run and no eviction is in flight.
      Nanoseconds waits_for =
          std::max(swapped, *std::max_element(eviction_done_.begin(), eviction_done_.end()));
      for (BlockIndex b : blocks) waits_for = std::max(waits_for, executor.last_use_end(b));
      host_ += us_to_ns(m.prefetch_d2h_call_us) * d.evict.size();
      moved = executor.write_back(blocks, std::max(host_, swapped), m.prefetch_d2h_gb_per_s);
      if (waits_for <= host_) host_ = std::max(host_, moved);
      eviction_thread_free_ = std::max(eviction_thread_free_, moved);
    }
    evicted = std::max(swapped, moved);
    set_done(eviction_done_, d.eviction_number, evicted);
    if (d.wait_for_evict) {
      start = std::max(start, evicted);
      wait_issued(m, {d.eviction_number});
    }
  }
  // The evictions whose room a placement or fetch takes.
  const Nanoseconds room =
      std::max({done_by(eviction_done_, d.fetch_waits_for_eviction), done_by(eviction_done_, d.after_drop),
                d.wait_for_evict ? evicted : Nanoseconds{0}});
  if (!d.place.empty() || !d.restore.empty() || !d.restore_ahead.empty() || !d.fetch.empty())
    wait_issued(m,
                {d.fetch_waits_for_eviction, d.after_drop, d.place_after_eviction, d.ahead_after_eviction});
  if (!d.place.empty() || !d.restore.empty()) {
    // After the blocks' earlier users (a progress marker past them, else the stream's work so far),
    // and the discards and copies back ahead issued before (the room, a block that died).
    const Nanoseconds users = d.place_after_stream_work   ? stream_so_far
                              : d.place_after_launch == 0 ? 0
                                                          : users_done(d.place_after_launch, stream_so_far);
    const Nanoseconds earliest = std::max({users, room, done_by(eviction_done_, d.place_after_eviction),
                                           discard_stream_free_, drop_stream_free_, restore_stream_free_});
    const Nanoseconds placed = occupy_stream(
        m, earliest,
        us_to_ns(m.place_call_us) + transfer_ns(bytes_of(d.place) + bytes_of(d.restore), m.place_gb_per_s),
        discard_stream_free_);
    Nanoseconds done = std::max(placed, executor.bring_in(blocks_of(d.place), placed, 0));
    if (!d.restore.empty()) {
      host_ += us_to_ns(m.copy_call_us) * (bytes_of(d.restore) / kBlock);
      done = std::max(
          done, executor.bring_in(blocks_of(d.restore), std::max(placed, host_), m.copy_h2d_gb_per_s, true));
    }
    discard_stream_free_ = done;  // the copies back run on the discard stream too
    set_placed(d.placement_number, done);
    start = std::max(start, done);
  }
  if (!d.restore_ahead.empty()) {
    // Placed and copied back on the restore stream once its room is free (the evictions and
    // discards issued before); the launch goes on.
    const Nanoseconds earliest = std::max(
        {room, done_by(eviction_done_, d.ahead_after_eviction), restore_stream_free_, drop_stream_free_});
    const Nanoseconds placed = occupy_stream(
        m, earliest, us_to_ns(m.place_call_us) + transfer_ns(bytes_of(d.restore_ahead), m.place_gb_per_s),
        restore_stream_free_);
    host_ += us_to_ns(m.copy_call_us) * (bytes_of(d.restore_ahead) / kBlock);
    const Nanoseconds done =
        executor.bring_in(blocks_of(d.restore_ahead), std::max(placed, host_), m.copy_h2d_gb_per_s, true);
    restore_stream_free_ = std::max(restore_stream_free_, done);
    set_placed(d.ahead_placement_number, done);
  }
  if (!d.fetch.empty()) {
    host_ += us_to_ns(m.prefetch_h2d_call_us) * d.fetch.size();
    start = std::max(start,
                     executor.bring_in(blocks_of(d.fetch), std::max(host_, room), m.prefetch_h2d_gb_per_s));
  }
  start = std::max(start, done_by(placement_done_, d.after_placement));
  start = std::max(start, done_by(eviction_done_, d.after_drop));
  if (d.after_every_placement) start = std::max(start, placement_done_.back());
  return start;
}

Nanoseconds OrderedPolicy::users_done(std::uint64_t last_user, Nanoseconds stream_so_far) const {
  const std::uint64_t marker = (last_user / kMarkerInterval + 1) * kMarkerInterval;
  if (marker >= operation_kernel_.size() || operation_kernel_[marker - 1] == kNoKernel) return stream_so_far;
  return kernel_end_[operation_kernel_[marker - 1]];
}

Nanoseconds OrderedPolicy::occupy_stream(const MachineModel& m, Nanoseconds earliest, Nanoseconds duration,
                                         Nanoseconds& free) {
  // The driver drops or places memory in the calling thread when the stream has nothing to wait
  // for (um_move_probe: enqueue time = done time on an idle stream). Behind earlier work the call
  // returns at once, unless the machine holds it until it has run. Not until the eviction thread's
  // copies out end as well: through the staging buffers, their copies of managed memory are short
  // copies within the GPU.
  const Nanoseconds begins = std::max(host_, earliest);
  if (begins == host_ || m.place_holds_thread) {
    thread_in_calls_ns_ += begins + duration - host_;
    host_ = begins + duration;
  }
  free = begins + duration;
  return free;
}

std::string OrderedPolicy::detail() const {
  if (!model_) return {};
  const core::LaunchOrderedStats& s = model_->stats();
  const core::LaunchOrderedOptions& o = options_.moves;
  // Whether the loop of shapes repeated its blocks (checked only once one of 256 or more operations
  // is known).
  char repeating[32] = "not checked";
  if (s.namings_checked != 0)
    std::snprintf(repeating, sizeof repeating, "%.0f%%",
                  100.0 * static_cast<double>(s.namings_repeated) / static_cast<double>(s.namings_checked));
  char text[768];
  std::snprintf(
      text, sizeof text,
      "limit %.2f GiB; prefetch %s, discard %s, place %s, swap %s; evicted %.2f GiB in %llu evictions "
      "(%llu waited for), swapped out %.2f GiB, copied back %.2f GiB (%.2f GiB ahead), placed %.2f GiB, "
      "fetched %.2f GiB, "
      "discarded %.2f GiB; victims %.2f GiB by predicted next use (loop of addresses %llu operations, of "
      "shapes %llu, blocks repeating with it %s), %.2f GiB "
      "least recently named; the program's thread held %.1f ms in placements and drops",
      gib(limit_bytes_), o.prefetch ? "on" : "off", o.discard_dead ? "on" : "off",
      o.place_fresh ? "on" : "off", o.swap ? "on" : "off", gib(s.evicted_bytes),
      static_cast<unsigned long long>(s.evictions), static_cast<unsigned long long>(s.waited_evictions),
      gib(s.swapped_out_bytes), gib(s.restored_bytes + s.restored_ahead_bytes), gib(s.restored_ahead_bytes),
      gib(s.placed_bytes), gib(s.fetched_bytes), gib(s.discarded_bytes), gib(s.victims_predicted_bytes),
      static_cast<unsigned long long>(s.loop_period), static_cast<unsigned long long>(s.shape_loop_period),
      repeating, gib(s.victims_unpredicted_bytes), static_cast<double>(thread_in_calls_ns_) / 1e6);
  return text;
}

}  // namespace deepum::sim
