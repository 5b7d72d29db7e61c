#include "deepum/core/event_pipeline.hpp"

#include <algorithm>

namespace deepum::core {
namespace {

// How often the driver's used-memory figure is sampled, for the trace and the peak.
constexpr Timestamp kSampleIntervalNs = 10'000'000;

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
  gpu_time_.on_launch(launch.correlation_id, launch.host_time, launch.behind_moves);
  std::lock_guard lock(stats_mutex_);
  ++stats_.launches;
  if (launch.pointer_count > 0) ++stats_.launches_with_managed_pointers;
}

void EventPipeline::set_kernel_records_paused(bool paused) {
  kernel_records_paused_ = paused;
  attributor_.set_recording_paused(paused);
}

void EventPipeline::measure_used_memory(UsedMemory used) {
  used_memory_ = std::move(used);
  if (!used_memory_) return;
  if (const std::optional<std::uint64_t> now = used_memory_()) baseline_used_bytes_ = *now;
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
    if (now > execution->end) execution_delay_us_.add((now - execution->end) / 1000);
  } else if (const auto* fault = std::get_if<PageFault>(&event)) {
    if (recorder) recorder->fault(*fault);
    attributor_.on_fault(*fault);
    gpu_time_.on_fault(*fault);
    residency_.on_fault(*fault);
    if (now > fault->end) fault_delay_us_.add((now - fault->end) / 1000);
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
      if (hint->kind == Hint::Kind::evict_to_host) stats_.launch_evicted_bytes += hint->bytes;
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

void EventPipeline::step(Timestamp now, EventRecorder* recorder, bool final) {
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
  // Activity in arrival order: a range is posted by its allocation before any fault on it.
  for (const ActivityEvent& event : events) handle(event, now, recorder);
  attributor_.attribute([](const PageFault&, const KernelExecution&, const LaunchSummary*) {}, final);
  if (attributor_.stats().faults != faults_seen_) {
    faults_seen_ = attributor_.stats().faults;
    last_fault_handled_ = now;
  }
  if (settled_) replay_settled(now, final);
  sample_residency(now, recorder);
  std::lock_guard lock(stats_mutex_);
  stats_.launches_dropped = launches_.dropped();
  stats_.attribution = attributor_.stats();
  stats_.gpu_time = gpu_time_.totals();
  stats_.fault_delay_us = fault_delay_us_.percentiles();
  stats_.execution_delay_us = execution_delay_us_.percentiles();
  stats_.migration_delay_us = migration_delay_us_.percentiles();
  stats_.step_us = step_us_.percentiles();
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

void EventPipeline::sample_residency(Timestamp now, EventRecorder* recorder) {
  if (now < last_sample_ + kSampleIntervalNs) return;
  last_sample_ = now;
  ResidentSample sample{now, residency_.resident_bytes(), 0};
  if (const std::optional<std::uint64_t> used = used_memory_ ? used_memory_() : std::nullopt) {
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
