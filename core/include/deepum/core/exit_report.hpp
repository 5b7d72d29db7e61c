// The exit report: every figure deepum counted in a run, gathered once at exit, rendered as the
// summary the log shows, as the stats_file's JSON (docs/stats-format.md), and judged in one line
// (judge). Pure: the CUDA side fills the counters, nothing here calls the driver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "deepum/core/event_pipeline.hpp"
#include "deepum/core/latency_histogram.hpp"
#include "deepum/core/launch_ordered_residency.hpp"
#include "deepum/core/statistics.hpp"

namespace deepum::core {

// The version of the stats_file's layout: raised when a field changes meaning or goes away;
// fields are added without raising it. Version 1 is version 2 with the records-driven movers'
// fields, which a reader ignores: both are read.
inline constexpr int kStatsSchemaVersion = 2;
inline constexpr int kOldestStatsSchemaVersion = 1;

// What the CUPTI tracer saw and could not see.
struct TracerCounters {
  std::uint64_t launches = 0, graph_launches = 0;
  std::vector<std::pair<std::string, std::uint64_t>> launches_by_api;  // the driver's launch calls
  std::uint64_t launches_with_managed_pointers = 0;
  std::uint64_t launches_pointers_truncated = 0;  // more managed pointers than a launch keeps
  std::uint64_t launches_packed_buffer = 0;       // arguments passed through `extra`
  std::uint64_t launches_without_layout = 0;      // not scanned: no parameter layout known
  std::uint64_t copies = 0, copies_with_managed_operands = 0, pointer_tables = 0;
  std::uint64_t layouts_learned = 0, layouts_unknown = 0, modules_unloaded = 0;
  std::uint64_t callback_exceptions = 0;
  std::uint64_t records_dropped = 0;     // CUPTI's own count
  std::uint64_t records_incomplete = 0;  // without timestamps (unfinished at a forced flush)
  std::uint64_t record_errors = 0, buffers_refused = 0;
  std::uint64_t polls_skipped_capturing = 0;
  std::uint64_t kernel_record_pauses = 0, kernel_records_paused_ns = 0;  // no faults to attribute
  std::uint64_t kernel_records_filtered = 0;
};

// The program's threads inside deepum: each launch and each copy callback timed whole (deciding,
// enqueuing moves, host waits), and within them the driver's calls that move or drop memory.
struct ProgramThreadCost {
  LatencySummary launch_callback, copy_callback;
  std::uint64_t eviction_calls_ns = 0, discard_calls_ns = 0, prefetch_calls_ns = 0, placement_calls_ns = 0;
  std::uint64_t host_copy_back_ns = 0;  // swapped blocks copied back by the host itself
  // Of the placements, the calls that copy swapped blocks back from the store.
  std::uint64_t placement_copy_calls_ns = 0;
  // Waiting for deepum's eviction thread to issue an eviction whose room an operation needs (most
  // of it inside the move calls above, the rest before the operation goes on).
  std::uint64_t eviction_thread_waits_ns = 0;
  std::uint64_t callbacks_ns() const { return launch_callback.total_ns + copy_callback.total_ns; }
  std::uint64_t move_calls_ns() const {
    return eviction_calls_ns + discard_calls_ns + prefetch_calls_ns + placement_calls_ns;
  }
};

// The engine that orders moves before launches (StreamOrderedEvictor), when it ran.
struct EngineCounters {
  LaunchOrderedStats moves;
  std::uint64_t evictions_after_marker = 0;   // started after their victims' last users
  std::uint64_t placements_after_marker = 0;  // after their blocks' earlier users, not all the stream's work
  std::uint64_t skipped_capturing = 0, skipped_busy = 0;
  std::uint64_t held_by_value_waits = 0;  // moved nothing: a program's stream memory wait might wait
  std::uint64_t eviction_failures = 0, prefetch_failures = 0;
  std::uint64_t swap_store_pinned_bytes = 0;
  std::uint64_t swap_store_pin_ns = 0;  // deepum's worker's time pinning it
  std::string swap_store_error;         // why the store stopped growing; empty: it never did
  bool eviction_thread = false, eviction_thread_own_context = false;
  std::uint64_t eviction_thread_ns = 0;  // the eviction thread's time in its move calls
  // Of it, the calls that copy swapped blocks into the store, and the drops after them (the host
  // wait for those copies included); of the drops, that wait and the drop calls themselves.
  std::uint64_t eviction_thread_copy_calls_ns = 0, eviction_thread_drops_ns = 0;
  std::uint64_t eviction_thread_drop_copy_waits_ns = 0, eviction_thread_drop_calls_ns = 0;
};

// One device's engine, where a process drives several devices (each holds its own limit).
struct DeviceEngineCounters {
  int device = 0;
  std::uint64_t resident_limit_bytes = 0;
  EngineCounters engine;
};

// What the CUDA side hands the session at exit.
struct RuntimeCounters {
  TracerCounters tracer;
  ProgramThreadCost program_thread;
  std::optional<EngineCounters> engine;              // the first device's
  std::vector<DeviceEngineCounters> device_engines;  // every device's, where there are several
};

struct ExitReport {
  std::string process;        // "pid 4242, python train.py"
  std::string config_origin;  // where the configuration came from
  StatisticsSnapshot allocations;
  std::uint64_t run_ns = 0;              // from deepum's first hook to the report
  std::optional<PipelineStats> tracing;  // when tracing started
  std::string tracing_status;            // what the tracer could do
  std::optional<RuntimeCounters> runtime;
};

// The one line that ends the summary: what cost the most, and the one change most likely to help.
struct Verdict {
  enum class Cause : std::uint8_t {
    no_calls,             // nothing intercepted
    untraced,             // tracing off or failed: moves cannot be judged
    whole_gpu,            // the resident limit is the whole GPU: nothing to move
    no_engine,            // no engine moved memory: mode driver, or it could not start
    launches_over_limit,  // launches named more than the limit leaves room for
    swap_store_full,      // live victims went back through the driver
    gpu_waits,            // the GPU waited for deepum's moves
    faults,               // the GPU served page faults
    thread_move_calls,    // the program's thread was held in the driver's move calls
    thread_copy_backs,    // ... copying swapped blocks back itself
    thread_decisions,     // ... in deepum's own decisions and waits
    nothing_dominant,     // every cost deepum sees is small
  };
  Cause cause = Cause::no_calls;
  std::string text;  // one line, no "deepum verdict:" prefix
};
const char* cause_name(Verdict::Cause cause);

Verdict judge(const ExitReport& report);
// The compact block the log shows at exit (a dozen lines at most, the verdict last).
std::string render_summary(const ExitReport& report);
// The stats_file's document (docs/stats-format.md).
std::string render_json(const ExitReport& report);

// "1.23 s", "45.6 ms", "789 us", "12 ns".
std::string format_duration(std::uint64_t ns);

}  // namespace deepum::core
