// EventPipeline: everything deepum learns flows through here. Producers (launch callbacks on the
// program's threads, CUPTI's activity thread, the allocation hooks) hand over events without
// waiting; the worker thread calls step(), which updates attribution and residency, checks the
// resident limit by the records in time order and records the trace. It observes only: the
// launch-ordered engine (cuda/StreamOrderedEvictor) makes every move, and reports them here.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "deepum/core/event_recorder.hpp"
#include "deepum/core/events.hpp"
#include "deepum/core/fault_attribution.hpp"
#include "deepum/core/gpu_time.hpp"
#include "deepum/core/launch_queue.hpp"
#include "deepum/core/residency_map.hpp"
#include "deepum/core/residency_replay.hpp"

namespace deepum::core {

struct PipelineOptions {
  std::uint64_t resident_limit_bytes = UINT64_MAX;
  // Measured on an H100 (GPT-2 124M at 2x and 3x): 1 GiB evicts in larger batches than 256 MiB
  // did, ran 1.1-1.7x faster, and kept the 3x peak within 5% of the limit in two runs of three.
  std::uint64_t eviction_headroom_bytes = 1ull << 30;
  // Evicting only matters below the physical size; at it, the driver evicts by itself. When
  // enforcing, new ranges are placed on the host first, so residency is counted from migrations.
  bool enforce_resident_limit = false;

  // The headroom: at least a tenth of the limit (faults keep arriving while an eviction runs), at
  // most a quarter.
  std::uint64_t effective_headroom() const {
    const std::uint64_t limit = resident_limit_bytes;
    return std::min(std::max(eviction_headroom_bytes, limit / 10), limit / 4);
  }
  // A batch of the evictions ordered before launches (LaunchOrderedResidency): the headroom, at
  // most an eighth of the limit (they evict ahead, so a large batch would waste the room).
  std::uint64_t launch_ordered_batch() const {
    return std::min(effective_headroom(), resident_limit_bytes / 8);
  }
};

struct Percentiles {
  std::uint64_t p50 = 0, p99 = 0, max = 0;
};

struct PipelineStats {
  std::uint64_t launches = 0;
  std::uint64_t launches_with_managed_pointers = 0;
  std::uint64_t launches_dropped = 0;
  std::uint64_t executions = 0;
  std::uint64_t fault_records = 0;
  std::uint64_t faults = 0;  // summed fault counts of the records
  std::uint64_t migrations_to_gpu = 0, bytes_to_gpu = 0;
  std::uint64_t migrations_to_host = 0, bytes_to_host = 0;
  std::uint64_t bytes_to_host_by_eviction = 0;  // the driver's own evictions
  std::uint64_t launch_evicted_bytes = 0;       // by evictions ordered before launches
  std::uint64_t launch_prefetched_bytes = 0;    // by prefetches ordered before launches
  // The driver's answers to thrashing: regions it saw thrash, times it throttled a processor, and
  // memory it mapped over the link instead of migrating (all causes, and because of thrashing).
  std::uint64_t thrashing_records = 0, thrashing_bytes = 0;
  std::uint64_t throttling_records = 0;
  std::uint64_t remote_map_records = 0, remote_map_bytes = 0, remote_map_bytes_for_thrashing = 0;
  std::uint64_t peak_estimated_resident_bytes = 0;
  // Residency by the migration records in time order, once they have settled (a few seconds behind
  // the estimate above, which runs behind the GPU by the records' delay): the true peak, and the
  // time spent over the limit. Kept only while the limit is enforced.
  std::uint64_t peak_resident_bytes = 0;
  std::uint64_t over_limit_ms = 0, over_limit_5pct_ms = 0, replayed_ms = 0;
  std::uint64_t records_out_of_order = 0;  // came later than the settling delay
  std::uint64_t peak_resident_blocks = 0;  // blocks holding any GPU bytes, at most
  std::uint64_t peak_measured_used_bytes = 0;
  AttributionStats attribution;
  GpuTime gpu_time;  // from kernel, copy and memset records (none while they are paused)
  // How long after a fault (a kernel) ended its record reached the worker: CUPTI's buffering, the
  // tracer's poll, the worker's period. What bounds how soon deepum can react to what the GPU does.
  Percentiles fault_delay_us, execution_delay_us, migration_delay_us;
  Percentiles step_us;  // the worker's time in step()
};

// Counts of values in power-of-two buckets: percentiles to within a factor of two, in fixed memory.
class Log2Histogram {
 public:
  void add(std::uint64_t value);
  // The upper bound of the bucket holding the q-th quantile (0 < q <= 1); 0 when empty.
  std::uint64_t quantile(double q) const;
  std::uint64_t max() const { return max_; }
  std::uint64_t count() const { return count_; }
  Percentiles percentiles() const { return {quantile(0.5), quantile(0.99), max_}; }

 private:
  std::array<std::uint64_t, 65> buckets_{};  // bucket b holds values < 2^b (bucket 0: the zeros)
  std::uint64_t count_ = 0, max_ = 0;
};

class EventPipeline {
 public:
  explicit EventPipeline(const PipelineOptions& options)
      : options_(options), residency_(/*faults_make_resident=*/!options.enforce_resident_limit) {
    if (options_.enforce_resident_limit) settled_.emplace(options_.resident_limit_bytes, kSettleNs);
  }

  // How long migration records are held before the time-ordered replay takes them: longer than
  // nearly all records are late (p99 1-2 s, max 2.8 s measured on an H100).
  static constexpr Timestamp kSettleNs = 3'000'000'000;

  // Producers: never block for long, never allocate per launch.
  void on_launch(const KernelLaunch& launch) { launches_.push(launch); }
  void on_execution(const KernelExecution& execution) { post(execution); }
  void on_fault(const PageFault& fault) { post(fault); }
  void on_migration(const Migration& migration) { post(migration); }
  void on_range(const RangeEvent& range) { post(range); }
  void on_driver_action(const DriverAction& action) { post(action); }
  // The engine evicted, discarded or prefetched before a launch (any thread).
  void on_hint(const Hint& hint) { post(hint); }
  // An eviction deepum ordered before a launch finished at `time`: the range is on the host (for
  // the records in time order, which may lack the driver's own record of it).
  void on_eviction_done(const AddressRange& range, Timestamp time) {
    post(Migration{time, time, range.address, range.bytes, MigrationDirection::device_to_host,
                   MigrationCause::deepum_eviction_done});
  }
  // A prefetch deepum ordered before a launch ran from `start` to `end`: the range is on the GPU.
  void on_prefetch_done(const AddressRange& range, Timestamp start, Timestamp end) {
    post(Migration{start, end, range.address, range.bytes, MigrationDirection::host_to_device,
                   MigrationCause::deepum_prefetch_done});
  }
  void on_function_name(std::uint64_t function, std::string name);
  // For the trace file only (the worker hands them to the recorder and nothing else): every
  // operand of a launch, a copy or memset as enqueued, the program's allocator handing a buffer
  // out or taking it back. Posted only while a trace file is recorded: operands allocate.
  void on_launch_operands(LaunchOperands operands) { post(std::move(operands)); }
  void on_copy_launch(const CopyLaunch& copy) { post(copy); }
  void on_buffer_event(const BufferEvent& buffer) { post(buffer); }

  // Worker: one round of work at time `now`. `recorder` may be null. `final` decides every
  // fault still waiting for its kernel.
  void step(Timestamp now, EventRecorder* recorder, bool final = false);
  // Worker: the driver's used-memory figure, sampled for the trace (reported only, never acted
  // on); nullopt where unknown. Its value now is the baseline later samples are measured from.
  using UsedMemory = std::function<std::optional<std::uint64_t>()>;
  void measure_used_memory(UsedMemory used);
  // Worker: how long the last step took, by the worker's own clock.
  void record_step_time(std::uint64_t microseconds) { step_us_.add(microseconds); }

  PipelineStats stats() const;
  bool enforces_resident_limit() const { return options_.enforce_resident_limit; }

  // Worker: the latest time a fault record was handled (0: none yet), and whether the tracer's
  // kernel records are paused (faults then cannot be attributed and are counted apart).
  Timestamp last_fault_handled() const { return last_fault_handled_; }
  void set_kernel_records_paused(bool paused);
  const ResidencyMap& residency() const { return residency_; }

 private:
  using ActivityEvent = std::variant<KernelExecution, PageFault, Migration, RangeEvent, Hint, DriverAction,
                                     LaunchOperands, CopyLaunch, BufferEvent>;
  template <typename Event>
  void post(Event&& event) {
    std::lock_guard lock(inbox_mutex_);
    inbox_.emplace_back(std::forward<Event>(event));
  }
  void handle(const KernelLaunch& launch, EventRecorder* recorder);
  void handle(const ActivityEvent& event, Timestamp now, EventRecorder* recorder);
  void replay_settled(Timestamp now, bool final);
  void sample_residency(Timestamp now, EventRecorder* recorder);

  PipelineOptions options_;
  LaunchQueue launches_;
  std::mutex inbox_mutex_;
  std::vector<ActivityEvent> inbox_;
  std::vector<std::pair<std::uint64_t, std::string>> new_function_names_;  // under inbox_mutex_

  // Worker-only state.
  FaultAttributor attributor_;
  GpuTimeAccount gpu_time_;
  ResidencyMap residency_;
  UsedMemory used_memory_;
  std::uint64_t baseline_used_bytes_ = 0;
  Timestamp last_fault_handled_ = 0;
  std::uint64_t faults_seen_ = 0;
  bool kernel_records_paused_ = false;
  Timestamp last_sample_ = 0;
  std::optional<TimeOrderedResidency> settled_;
  Log2Histogram fault_delay_us_, execution_delay_us_, migration_delay_us_, step_us_;
  mutable std::mutex stats_mutex_;  // stats_ is read by the exit report while the worker runs
  PipelineStats stats_;
};

}  // namespace deepum::core
