// EventPipeline: everything deepum learns flows through here. Producers (launch callbacks on the
// program's threads, CUPTI's activity thread, the allocation hooks) hand over events without
// waiting; the worker thread calls step(), which updates attribution and residency, records the
// trace, and keeps GPU residency under the resident limit by evicting least recently used blocks.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "deepum/core/event_recorder.hpp"
#include "deepum/core/events.hpp"
#include "deepum/core/fault_attribution.hpp"
#include "deepum/core/hint_executor.hpp"
#include "deepum/core/launch_queue.hpp"
#include "deepum/core/residency_map.hpp"

namespace deepum::core {

struct PipelineOptions {
  std::uint64_t resident_limit_bytes = UINT64_MAX;
  std::uint64_t eviction_headroom_bytes = 256ull << 20;
  // Evicting only matters below the physical size; at it, the driver evicts by itself. When
  // enforcing, new ranges are placed on the host first, so residency is counted from migrations.
  bool enforce_resident_limit = false;
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
  std::uint64_t deepum_evictions = 0, deepum_evicted_bytes = 0, deepum_eviction_failures = 0;
  std::uint64_t peak_estimated_resident_bytes = 0;
  std::uint64_t peak_measured_used_bytes = 0;
  AttributionStats attribution;
};

class EventPipeline {
 public:
  explicit EventPipeline(const PipelineOptions& options)
      : options_(options), residency_(/*faults_make_resident=*/!options.enforce_resident_limit) {}

  // Producers: never block for long, never allocate per launch.
  void on_launch(const KernelLaunch& launch) { launches_.push(launch); }
  void on_execution(const KernelExecution& execution) { post(execution); }
  void on_fault(const PageFault& fault) { post(fault); }
  void on_migration(const Migration& migration) { post(migration); }
  void on_range(const RangeEvent& range) { post(range); }
  void on_function_name(std::uint64_t function, std::string name);

  // Worker: one round of work at time `now`. `recorder` may be null. `final` decides every
  // fault still waiting for its kernel.
  void step(Timestamp now, HintExecutor& executor, EventRecorder* recorder, bool final = false);
  // The driver's used-memory figure at start, subtracted from later measurements (reported only).
  void set_measurement_baseline(std::uint64_t used_bytes) { baseline_used_bytes_ = used_bytes; }

  PipelineStats stats() const;
  bool enforces_resident_limit() const { return options_.enforce_resident_limit; }

  // Worker: the latest time a fault record was handled (0: none yet), and whether the tracer's
  // kernel records are paused (faults then cannot be attributed and are counted apart).
  Timestamp last_fault_handled() const { return last_fault_handled_; }
  void set_kernel_records_paused(bool paused);
  const ResidencyMap& residency() const { return residency_; }

 private:
  using ActivityEvent = std::variant<KernelExecution, PageFault, Migration, RangeEvent>;
  template <typename Event>
  void post(const Event& event) {
    std::lock_guard lock(inbox_mutex_);
    inbox_.emplace_back(event);
  }
  void handle(const KernelLaunch& launch, EventRecorder* recorder);
  void handle(const ActivityEvent& event, EventRecorder* recorder);
  void enforce_resident_limit(Timestamp now, HintExecutor& executor, EventRecorder* recorder);
  void sample_residency(Timestamp now, HintExecutor& executor, EventRecorder* recorder);
  bool in_flight(BlockId block) const;

  PipelineOptions options_;
  LaunchQueue launches_;
  std::mutex inbox_mutex_;
  std::vector<ActivityEvent> inbox_;
  std::vector<std::pair<std::uint64_t, std::string>> new_function_names_;  // under inbox_mutex_

  // Worker-only state.
  FaultAttributor attributor_;
  ResidencyMap residency_;
  // Blocks named by launches the GPU has not finished: evicting them would fault them straight back.
  std::unordered_map<std::uint64_t, std::vector<BlockId>> in_flight_launches_;  // by correlation id
  std::unordered_map<BlockId, std::uint32_t> in_flight_blocks_;
  std::uint64_t baseline_used_bytes_ = 0;
  Timestamp last_fault_handled_ = 0;
  std::uint64_t faults_seen_ = 0;
  bool kernel_records_paused_ = false;
  Timestamp last_sample_ = 0;
  mutable std::mutex stats_mutex_;  // stats_ is read by the exit report while the worker runs
  PipelineStats stats_;
};

}  // namespace deepum::core
