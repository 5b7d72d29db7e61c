// `deepum report RUN`: one self-contained HTML page (inline SVG; no script, no link, nothing
// fetched) from a run's trace file (trace_file) and statistics file (stats_file): the verdict,
// residency and moves over time, where the time went, the kernels that waited or faulted the most,
// the program's thread in deepum per launch, and every counter. Either file alone gives the parts
// it can. Every problem with the input ends in one message naming the file, never an abort.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "deepum/core/gpu_time.hpp"
#include "deepum/core/latency_histogram.hpp"
#include "deepum/core/residency_replay.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::core {

// One interval of the run, on the trace's clock from its first record.
struct ReportInterval {
  std::uint64_t resident_max = 0;                     // by the migration records in time order
  std::uint64_t estimated_max = 0;                    // the live estimate's samples
  std::uint64_t to_gpu_bytes = 0, to_host_bytes = 0;  // migrations ending in it
  Timestamp busy_ns = 0;    // kernels, copies and memsets starting in it: their run times
  Timestamp waited_ns = 0;  // ... their waits after work was runnable
  std::uint64_t faults = 0;
};

// What one kernel function cost, over all its executions.
struct KernelCost {
  std::string name;
  std::uint64_t executions = 0;
  Timestamp busy_ns = 0, waited_ns = 0;
  std::uint64_t fault_groups = 0, faults = 0;
  Timestamp fault_ns = 0;  // the durations of the fault groups attributed to it, summed
  Timestamp stall_ns() const { return waited_ns + fault_ns; }
};

struct TraceAnalysis {
  std::string path;
  TraceMetadata metadata;
  Timestamp span_ns = 0;      // first to last timed record
  Timestamp interval_ns = 0;  // of each timeline entry
  std::vector<ReportInterval> timeline;
  std::uint64_t limit_bytes = 0;  // the resident limit the run held (0: none known)
  ResidencyReplay residency;      // its error says why residency was not replayed
  GpuTime gpu;
  std::vector<KernelCost> kernels;  // the most stalled first, at most kMaxReportKernels
  std::uint64_t launches = 0, migrations = 0, hints = 0;
};
inline constexpr std::size_t kMaxReportIntervals = 600;
inline constexpr std::size_t kMaxReportKernels = 20;

// `limit_bytes` 0: the trace's own metadata says (resident_limit_bytes), else none is drawn.
TraceAnalysis analyze_trace(const Trace& trace, std::string path, std::uint64_t limit_bytes = 0);

// The figures of a statistics file the report shows (docs/stats-format.md).
struct StatsView {
  std::string path;
  std::string process, config, verdict_text, verdict_cause;
  std::uint64_t run_ns = 0, resident_limit_bytes = 0, alloc_limit_bytes = 0, device_total_bytes = 0;
  std::uint64_t peak_managed_bytes = 0;
  bool traced = false;  // the file has `tracing`
  GpuTime gpu;
  bool timed_launches = false;  // the file has `program_thread`
  LatencySummary launch_callback;
  std::uint64_t callbacks_ns = 0, move_calls_ns = 0, host_copy_back_ns = 0;
  // Every scalar field, by its dotted path, in the document's order.
  std::vector<std::pair<std::string, std::string>> fields;
};
// nullopt with `error` naming the problem (not JSON, not a statistics file, a newer schema).
std::optional<StatsView> parse_stats(std::string_view text, const std::string& path, std::string& error);

std::string render_report_html(const std::optional<TraceAnalysis>& trace,
                               const std::optional<StatsView>& stats);

// RUN: a directory holding the run's files (one .dtrace, one statistics .json), a .dtrace file, a
// trace_file prefix (PREFIX.dtrace), or a statistics .json file. `stats` names the statistics file
// where RUN does not. `out` empty: next to RUN (DIR/deepum-report.html, PREFIX.html, NAME.html).
struct ReportRequest {
  std::string run, stats, out;
};
struct ReportInputs {
  std::string trace, stats, out;  // trace or stats may be empty, not both
};
std::optional<ReportInputs> find_report_inputs(const ReportRequest& request, std::string& error);

// Exit status as the trace commands' (trace_commands.hpp): 0 written, 1 not written, 2 bad input.
int run_report_command(const ReportRequest& request, std::FILE* out, std::FILE* err);

}  // namespace deepum::core
