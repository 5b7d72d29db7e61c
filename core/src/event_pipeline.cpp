#include "deepum/core/event_pipeline.hpp"

#include <algorithm>

namespace deepum::core {
namespace {

// How often the driver's used-memory figure is sampled, for the trace and the peak.
constexpr Timestamp kSampleIntervalNs = 10'000'000;
// A finished kernel's faults are taken as all in once a later fault has been seen, or once kernels
// have run this long past it without one.
constexpr Timestamp kCompletionWaitNs = 20'000'000;
// Finished kernels waiting for their faults, at most (the policy learns less beyond that).
constexpr std::size_t kMaxCompletions = 1 << 16;

}  // namespace

void Log2Histogram::add(std::uint64_t value) {
  std::size_t bucket = 0;
  while (bucket < 64 && (std::uint64_t{1} << bucket) <= value) ++bucket;
  ++buckets_[bucket];
  ++count_;
  max_ = std::max(max_, value);
}

std::uint64_t Log2Histogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_) + 0.5);
  std::uint64_t seen = 0;
  for (std::size_t bucket = 0; bucket < buckets_.size(); ++bucket) {
    seen += buckets_[bucket];
    if (seen >= std::max<std::uint64_t>(rank, 1)) {
      return bucket == 0 ? 0 : std::min(max_, (bucket >= 64 ? UINT64_MAX : (std::uint64_t{1} << bucket) - 1));
    }
  }
  return max_;
}

void EventPipeline::on_function_name(std::uint64_t function, std::string name) {
  std::lock_guard lock(inbox_mutex_);
  new_function_names_.emplace_back(function, std::move(name));
}

void EventPipeline::handle(const KernelLaunch& launch, EventRecorder* recorder) {
  if (recorder) recorder->launch(launch);
  attributor_.on_launch(launch);
  gpu_time_.on_launch(launch.correlation_id, launch.host_time);
  if (policy_) policy_->on_launch(launch);
  std::vector<BlockId> blocks;
  blocks.reserve(launch.pointer_count);
  for (std::size_t i = 0; i < launch.pointer_count; ++i) {
    residency_.on_use(launch.pointers[i], launch.host_time);
    blocks.push_back(block_of(launch.pointers[i]));
  }
  std::lock_guard lock(stats_mutex_);
  ++stats_.launches;
  if (launch.pointer_count > 0) {
    ++stats_.launches_with_managed_pointers;
    // Without kernel records no execution would ever retire the launch: do not track it.
    if (kernel_records_paused_) return;
    for (BlockId block : blocks) ++in_flight_blocks_[block];
    in_flight_launches_.emplace(launch.correlation_id, std::move(blocks));
  }
}

void EventPipeline::set_kernel_records_paused(bool paused) {
  kernel_records_paused_ = paused;
  attributor_.set_recording_paused(paused);
  if (paused) {
    std::lock_guard lock(stats_mutex_);
    in_flight_launches_.clear();
    in_flight_blocks_.clear();
  }
}

void EventPipeline::handle(const ActivityEvent& event, Timestamp now, EventRecorder* recorder) {
  // The trace file's own records: nothing else in the pipeline follows them.
  if (const auto* operands = std::get_if<LaunchOperands>(&event)) {
    if (recorder) recorder->launch_operands(*operands);
    return;
  }
  if (const auto* copy = std::get_if<CopyLaunch>(&event)) {
    if (recorder) recorder->copy_launch(*copy);
    gpu_time_.on_launch(copy->correlation_id, copy->host_time);
    return;
  }
  if (const auto* buffer = std::get_if<BufferEvent>(&event)) {
    if (recorder) recorder->buffer_event(*buffer);
    return;
  }
  std::lock_guard lock(stats_mutex_);
  if (const auto* execution = std::get_if<KernelExecution>(&event)) {
    if (recorder) recorder->execution(*execution);
    attributor_.on_execution(*execution);
    gpu_time_.on_execution(*execution);
    ++stats_.executions;
    newest_execution_end_ = std::max(newest_execution_end_, execution->end);
    if (now > execution->end) execution_delay_us_.add((now - execution->end) / 1000);
    if (policy_ && execution->operation == GpuOperation::kernel) {
      policy_->on_kernel_executed(execution->correlation_id);
      if (completions_.size() >= kMaxCompletions) {
        completion_index_.erase(completions_.front().correlation_id);
        completions_.pop_front();
        ++completions_popped_;
      }
      completion_index_[execution->correlation_id] = completions_popped_ + completions_.size();
      completions_.push_back({execution->correlation_id, execution->end, {}});
    }
    if (auto it = in_flight_launches_.find(execution->correlation_id); it != in_flight_launches_.end()) {
      for (BlockId block : it->second) {
        if (auto ref = in_flight_blocks_.find(block); ref != in_flight_blocks_.end() && --ref->second == 0) {
          in_flight_blocks_.erase(ref);
        }
      }
      in_flight_launches_.erase(it);
    }
  } else if (const auto* fault = std::get_if<PageFault>(&event)) {
    if (recorder) recorder->fault(*fault);
    attributor_.on_fault(*fault);
    gpu_time_.on_fault(*fault);
    residency_.on_fault(*fault);
    if (now > fault->end) fault_delay_us_.add((now - fault->end) / 1000);
    if (fault->access != FaultAccess::prefetch) {
      newest_fault_start_ = std::max(newest_fault_start_, fault->start);
      if (policy_ && !kernel_records_paused_) policy_->on_fault(block_of(fault->address));
    }
    ++stats_.fault_records;
    stats_.faults += fault->fault_count;
  } else if (const auto* migration = std::get_if<Migration>(&event)) {
    if (recorder) recorder->migration(*migration);
    if (migration->cause == MigrationCause::deepum_eviction_done ||
        migration->cause == MigrationCause::deepum_prefetch_done) {
      // deepum's own account: the live estimate moved the range when the eviction or prefetch was
      // decided; only the records in time order need it, and no byte counts as moved twice.
      if (settled_) settled_->on_migration(*migration);
      return;
    }
    residency_.on_migration(*migration);
    if (settled_) settled_->on_migration(*migration);
    if (now > migration->end) migration_delay_us_.add((now - migration->end) / 1000);
    if (migration->direction == MigrationDirection::host_to_device) {
      ++stats_.migrations_to_gpu;
      stats_.bytes_to_gpu += migration->bytes;
    } else {
      ++stats_.migrations_to_host;
      stats_.bytes_to_host += migration->bytes;
      if (migration->cause == MigrationCause::eviction) stats_.bytes_to_host_by_eviction += migration->bytes;
    }
  } else if (const auto* hint = std::get_if<Hint>(&event)) {
    if (recorder) recorder->hint(*hint);
    if (hint->kind == Hint::Kind::prefetch_to_gpu) {
      // Prefetched in the program's stream before a launch: on the GPU as of now.
      residency_.on_migration(Migration{hint->time, hint->time, hint->address, hint->bytes,
                                        MigrationDirection::host_to_device, MigrationCause::prefetch});
      stats_.launch_prefetched_bytes += hint->bytes;
    } else {
      // Off the GPU as of now: discarded (placed on the host without moving a byte), or evicted in
      // the program's stream before a launch.
      residency_.on_evicted({hint->address, hint->bytes}, hint->time);
      if (hint->kind == Hint::Kind::discard) {
        stats_.prefetch.discarded_bytes += hint->bytes;
      } else {
        stats_.launch_evicted_bytes += hint->bytes;
      }
    }
  } else if (const auto* action = std::get_if<DriverAction>(&event)) {
    // Counted only: remote mappings move nothing, so residency is unchanged.
    switch (action->kind) {
      case DriverAction::Kind::thrashing:
        ++stats_.thrashing_records;
        stats_.thrashing_bytes += action->bytes;
        break;
      case DriverAction::Kind::throttling:
        ++stats_.throttling_records;
        break;
      case DriverAction::Kind::remote_map:
        ++stats_.remote_map_records;
        stats_.remote_map_bytes += action->bytes;
        if (action->cause == DriverAction::Cause::thrashing)
          stats_.remote_map_bytes_for_thrashing += action->bytes;
        break;
    }
  } else if (const auto* range = std::get_if<RangeEvent>(&event)) {
    if (recorder) recorder->range(*range);
    if (policy_) policy_->on_range(*range);
    if (settled_) settled_->on_range(*range);
    if (range->kind == RangeEvent::Kind::allocated) {
      residency_.on_range_allocated(range->address, range->bytes);
    } else {
      residency_.on_range_freed(range->address, range->bytes);
    }
  }
  stats_.peak_estimated_resident_bytes = residency_.peak_resident_bytes();
  stats_.peak_resident_blocks = residency_.peak_resident_blocks();
}

bool EventPipeline::in_flight(BlockId block) const { return in_flight_blocks_.count(block) != 0; }

void EventPipeline::step(Timestamp now, HintExecutor& executor, EventRecorder* recorder, bool final) {
  std::vector<ActivityEvent> events;
  std::vector<std::pair<std::uint64_t, std::string>> names;
  {
    std::lock_guard lock(inbox_mutex_);
    events.swap(inbox_);
    names.swap(new_function_names_);
  }
  if (recorder) {
    for (const auto& [function, name] : names) recorder->function_name(function, name);
  }
  // Launches first: a kernel's execution record never precedes its launch.
  launches_.drain([&](const KernelLaunch& launch) { handle(launch, recorder); });
  if (policy_) {
    for (const auto& [stream, correlation_id] : progress_)
      policy_->on_stream_progress(stream, correlation_id);
  }
  progress_.clear();
  // Activity in arrival order: a range is posted by its allocation before any fault on it.
  for (const ActivityEvent& event : events) handle(event, now, recorder);
  attributor_.attribute(
      [this](const PageFault& fault, const KernelExecution& execution, const LaunchSummary* launch) {
        if (launch != nullptr) note_faulted_block(execution, fault);
      },
      final);
  if (policy_) {
    complete_kernels(final);
    if (options_.enforce_resident_limit && !final) run_policy(now, executor, recorder);
  }
  if (attributor_.stats().faults != faults_seen_) {
    faults_seen_ = attributor_.stats().faults;
    last_fault_handled_ = now;
  }
  if (settled_) replay_settled(now, final);
  // A policy that evicts also absorbs overshoot with its plans (they evict down to the budget),
  // asynchronously; a synchronous eviction here would only wait behind its queued evictions.
  if (evicts_from_records_) {
    learn_headroom();
    enforce_resident_limit(now, executor, recorder);
  }
  sample_residency(now, executor, recorder);
  std::lock_guard lock(stats_mutex_);
  stats_.launches_dropped = launches_.dropped();
  stats_.attribution = attributor_.stats();
  stats_.gpu_time = gpu_time_.totals();
  stats_.fault_delay_us = fault_delay_us_.percentiles();
  stats_.execution_delay_us = execution_delay_us_.percentiles();
  stats_.migration_delay_us = migration_delay_us_.percentiles();
  stats_.step_us = step_us_.percentiles();
  if (policy_) {
    const PrefetchStats learned = policy_->stats();
    stats_.prefetching = true;
    stats_.prefetch.timely = learned.timely;
    stats_.prefetch.late = learned.late;
    stats_.prefetch.wasted = learned.wasted;
    stats_.prefetch.lookahead = learned.lookahead;
    stats_.prefetch.window_blocks_max = learned.window_blocks_max;
    stats_.prefetch.budget_blocks = learned.budget_blocks;
    stats_.prefetch.resets = learned.resets;
    stats_.prefetch.faults_in_window = learned.faults_in_window;
    stats_.prefetch.faults_outside_window = learned.faults_outside_window;
  }
}

void EventPipeline::note_faulted_block(const KernelExecution& execution, const PageFault& fault) {
  auto it = completion_index_.find(execution.correlation_id);
  if (it == completion_index_.end()) return;  // already handed to the policy
  std::vector<BlockId>& faulted = completions_[it->second - completions_popped_].faulted;
  const BlockId block = block_of(fault.address);
  if (std::find(faulted.begin(), faulted.end(), block) == faulted.end()) faulted.push_back(block);
}

void EventPipeline::complete_kernels(bool final) {
  while (!completions_.empty()) {
    const Completion& next = completions_.front();
    const bool faults_in = newest_fault_start_ > next.end + FaultAttributor::kSlackNs ||
                           newest_execution_end_ > next.end + kCompletionWaitNs;
    if (!faults_in && !final) return;
    policy_->on_kernel_complete(next.correlation_id, next.faulted);
    completion_index_.erase(next.correlation_id);
    completions_.pop_front();
    ++completions_popped_;
  }
}

void EventPipeline::run_policy(Timestamp now, HintExecutor& executor, EventRecorder* recorder) {
  // Room still being evicted is not there yet: plan against a limit lowered by it, and evict
  // nothing more until it is done; likewise prefetch nothing more while prefetches still run.
  const std::uint64_t evicting = executor.evictions_in_flight_bytes();
  const std::uint64_t limit =
      options_.resident_limit_bytes - std::min(options_.resident_limit_bytes, evicting);
  const bool may_prefetch = executor.prefetches_in_flight_bytes() == 0;
  if (evicting != 0 && !may_prefetch) return;
  HintPlan plan = policy_->plan(residency_, limit, /*may_evict=*/evicting == 0, may_prefetch);
  plan.discard = residency_.clip_to_managed(plan.discard);
  plan.evict = residency_.clip_to_managed(plan.evict);
  // Only the pages the program touches of each block: whole blocks would hold 40% more (GPT-2).
  plan.prefetch = residency_.clip_to_managed(residency_.touched_parts(plan.prefetch));
  if (plan.empty()) return;
  const bool ok = executor.submit(plan);
  // Counted as done when submitted, so the next plan does not ask again. A hint the driver refuses
  // (rare: logged once, counted) leaves the estimate wrong until the block's next fault or
  // migration record.
  for (const AddressRange& range : plan.discard) residency_.on_evicted(range, now);
  for (const AddressRange& range : plan.evict) residency_.on_evicted(range, now);
  for (const AddressRange& range : plan.prefetch) residency_.on_prefetched(range, now);
  if (recorder) {
    for (const AddressRange& range : plan.discard)
      recorder->hint(Hint{Hint::Kind::discard, now, range.address, range.bytes});
    for (const AddressRange& range : plan.evict)
      recorder->hint(Hint{Hint::Kind::evict_to_host, now, range.address, range.bytes});
    for (const AddressRange& range : plan.prefetch)
      recorder->hint(Hint{Hint::Kind::prefetch_to_gpu, now, range.address, range.bytes});
  }
  std::lock_guard lock(stats_mutex_);
  ++stats_.prefetch.plans;
  if (!ok) ++stats_.prefetch.plan_failures;
  stats_.prefetch.prefetched_bytes += plan.prefetch_bytes();
  stats_.prefetch.pre_evicted_bytes += plan.evict_bytes();
  stats_.prefetch.discarded_bytes += total_bytes(plan.discard);
  stats_.peak_estimated_resident_bytes = residency_.peak_resident_bytes();
  stats_.peak_resident_blocks = residency_.peak_resident_blocks();
}

void EventPipeline::replay_settled(Timestamp now, bool final) {
  if (final) {
    settled_->finish();
  } else {
    settled_->advance(now);
  }
  const ResidencyReplay& replay = settled_->result();
  std::lock_guard lock(stats_mutex_);
  stats_.peak_resident_bytes = replay.peak_bytes;
  stats_.over_limit_ms = replay.over_limit_ns / 1'000'000;
  stats_.over_limit_5pct_ms = replay.over_limit_5pct_ns / 1'000'000;
  stats_.replayed_ms =
      replay.last_time > replay.first_time ? (replay.last_time - replay.first_time) / 1'000'000 : 0;
  stats_.records_out_of_order = replay.out_of_order;
}

// Residency past the limit means more arrived between crossing the trigger and the eviction taking
// effect than the headroom holds (records arrive late, evictions take time): start that much
// earlier from now on. Grows once per overshoot, by its height, up to half the limit. Overshoots
// are read from the records in time order (seconds late), not from the live estimate: that one
// runs behind the GPU and misses most of each overshoot, and learning from both would count the
// part it sees twice.
void EventPipeline::learn_headroom() {
  if (!settled_) return;
  const std::uint64_t peak = settled_->take_recent_peak();
  if (peak == 0) return;  // nothing replayed this step: the overshoot, if any, goes on
  const std::uint64_t limit = options_.resident_limit_bytes;
  if (peak > limit && peak - limit > settled_overshoot_) {
    const std::uint64_t over = peak - limit;
    std::lock_guard lock(stats_mutex_);
    if (settled_overshoot_ == 0) ++stats_.overshoots;
    headroom_ = std::min(options_.max_headroom(), headroom_ + (over - settled_overshoot_));
    stats_.eviction_headroom_bytes = headroom_;
    settled_overshoot_ = over;
  }
  if (settled_->resident_bytes() <= limit) settled_overshoot_ = 0;
}

void EventPipeline::enforce_resident_limit(Timestamp now, HintExecutor& executor, EventRecorder* recorder) {
  const std::uint64_t limit = options_.resident_limit_bytes;
  // The estimate, not the driver's used-memory figure: the driver keeps GPU pages it has migrated
  // away in its own pool, so that figure never falls (measured on an H200: it stayed at the full
  // footprint while deepum evicted).
  const std::uint64_t resident = residency_.resident_bytes();
  const std::uint64_t trigger = limit - std::min(limit, headroom_);
  if (resident <= trigger) return;
  // Evict a batch below the trigger so eviction runs in batches, not per fault.
  const std::uint64_t batch = options_.effective_headroom();
  const std::uint64_t target = trigger > batch ? trigger - batch : 0;
  const std::vector<AddressRange> victims =
      residency_.choose_victims(resident - target, [this](BlockId block) { return in_flight(block); });
  if (victims.empty()) return;
  const bool ok = executor.evict_to_host(victims);
  std::uint64_t bytes = 0;
  for (const AddressRange& range : victims) {
    bytes += range.bytes;
    if (ok) residency_.on_evicted(range, now);
    if (recorder) recorder->hint(Hint{Hint::Kind::evict_to_host, now, range.address, range.bytes});
  }
  std::lock_guard lock(stats_mutex_);
  if (ok) {
    ++stats_.deepum_evictions;
    stats_.deepum_evicted_bytes += bytes;
  } else {
    ++stats_.deepum_eviction_failures;
  }
}

void EventPipeline::sample_residency(Timestamp now, HintExecutor& executor, EventRecorder* recorder) {
  if (now < last_sample_ + kSampleIntervalNs) return;
  last_sample_ = now;
  ResidentSample sample{now, residency_.resident_bytes(), 0};
  if (auto used = executor.device_used_bytes()) {
    sample.measured_used_bytes = *used > baseline_used_bytes_ ? *used - baseline_used_bytes_ : 0;
  }
  if (recorder) recorder->resident(sample);
  std::lock_guard lock(stats_mutex_);
  stats_.peak_measured_used_bytes = std::max(stats_.peak_measured_used_bytes, sample.measured_used_bytes);
}

PipelineStats EventPipeline::stats() const {
  std::lock_guard lock(stats_mutex_);
  return stats_;
}

}  // namespace deepum::core
