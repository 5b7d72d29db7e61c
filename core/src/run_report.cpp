// `deepum report`: finding a run's files, analysing its trace, reading its statistics. The page
// itself is drawn by report_html.cpp.
#include "deepum/core/run_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <filesystem>
#include <new>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "deepum/core/exit_report.hpp"
#include "deepum/core/fault_attribution.hpp"
#include "deepum/core/input_file.hpp"
#include "deepum/core/output_file.hpp"
#include "deepum/core/trace_commands.hpp"

namespace deepum::core {

namespace {

namespace fs = std::filesystem;

// The most of a statistics file read: far above what deepum writes (a few KiB).
constexpr std::uint64_t kMaxStatsBytes = std::uint64_t{64} << 20;

std::uint64_t metadata_number(const TraceMetadata& metadata, std::string_view key) {
  const auto it = metadata.find(key);
  std::uint64_t value = 0;
  if (it != metadata.end()) std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
  return value;
}

// First and last nonzero timestamps of the records the report draws (0 means "not known").
std::optional<TimeSpan> drawn_span(const Trace& trace) {
  std::optional<TimeSpan> span;
  const auto see = [&span](Timestamp first, Timestamp last) {
    if (first == 0) return;
    if (!span) span = TimeSpan{first, first};
    span->first = std::min(span->first, first);
    span->last = std::max({span->last, first, last});
  };
  for (const KernelLaunch& l : trace.launches) see(l.host_time, l.host_time);
  for (const KernelExecution& e : trace.executions) see(e.start, e.end);
  for (const PageFault& f : trace.faults) see(f.start, f.end);
  for (const Migration& m : trace.migrations) see(m.start, m.end);
  for (const ResidentSample& s : trace.resident_samples) see(s.time, s.time);
  return span;
}

// The timeline entry holding `time`; nullptr outside the run.
ReportInterval* interval_at(TraceAnalysis& a, Timestamp origin, Timestamp time) {
  if (time < origin || a.interval_ns == 0) return nullptr;
  const auto index = static_cast<std::size_t>((time - origin) / a.interval_ns);
  return index < a.timeline.size() ? &a.timeline[index] : nullptr;
}

// Residency by the records in time order; its timeline starts at the first migration, ours at
// the first record.
void add_residency(const Trace& trace, Timestamp origin, TraceAnalysis& a) {
  std::vector<ResidencyInterval> intervals;
  a.residency = replay_residency(trace, a.limit_bytes, &intervals, a.interval_ns);
  if (!a.residency.error.empty() || intervals.empty()) return;
  Timestamp first_migration = UINT64_MAX;
  for (const Migration& m : trace.migrations) {
    if (m.start != 0) first_migration = std::min(first_migration, m.start);
  }
  for (const ResidencyInterval& in : intervals) {
    if (ReportInterval* out = interval_at(a, origin, first_migration + in.start)) {
      out->resident_max = std::max(out->resident_max, in.resident_max);
      out->estimated_max = std::max(out->estimated_max, in.estimated_max);
      out->to_gpu_bytes += in.to_gpu_bytes;
      out->to_host_bytes += in.to_host_bytes;
    }
  }
}

std::string copy_name(const KernelExecution& e) {
  if (e.operation == GpuOperation::memset) return "memset";
  static constexpr const char* kKinds[] = {"",     "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                           "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return e.copy_kind < std::size(kKinds) && e.copy_kind != 0 ? std::string("memcpy ") + kKinds[e.copy_kind]
                                                             : std::string("memcpy");
}

// Names each execution by its kernel's function name (or what it copied).
class ExecutionNames {
 public:
  explicit ExecutionNames(const Trace& trace) : names_(trace.function_names) {
    for (const KernelLaunch& l : trace.launches) function_of_[l.correlation_id] = l.function;
  }
  std::string operator()(const KernelExecution& e) const {
    if (e.operation != GpuOperation::kernel) return copy_name(e);
    if (e.deepums_own()) return kOwnCopyKernelName;
    const auto launch = function_of_.find(e.correlation_id);
    if (launch == function_of_.end()) return "kernel (launch not recorded)";
    const auto name = names_.find(launch->second);
    return name != names_.end() ? name->second : fmt::format("kernel (function {:#x})", launch->second);
  }

 private:
  const std::unordered_map<std::uint64_t, std::string>& names_;
  std::unordered_map<std::uint64_t, std::uint64_t> function_of_;
};

// Each execution's wait after it was runnable (launches and executions merged in time order,
// as the library's worker sees them), its run time, and the faults served meanwhile.
void add_gpu_time(const Trace& trace, Timestamp origin, TraceAnalysis& a,
                  std::unordered_map<std::string, KernelCost>& costs, const ExecutionNames& name_of) {
  std::vector<std::pair<Timestamp, std::uint64_t>> launched;  // host time, correlation id
  for (const KernelLaunch& l : trace.launches) launched.emplace_back(l.host_time, l.correlation_id);
  for (const CopyLaunch& c : trace.copies) launched.emplace_back(c.host_time, c.correlation_id);
  std::sort(launched.begin(), launched.end());
  std::vector<const KernelExecution*> executions;
  for (const KernelExecution& e : trace.executions) executions.push_back(&e);
  std::stable_sort(executions.begin(), executions.end(),
                   [](const KernelExecution* x, const KernelExecution* y) { return x->start < y->start; });
  GpuTimeAccount account;
  std::size_t next = 0;
  for (const KernelExecution* e : executions) {
    for (; next < launched.size() && launched[next].first <= e->start; ++next)
      account.on_launch(launched[next].second, launched[next].first);
    const Timestamp wait = account.on_execution(*e);
    KernelCost& cost = costs[name_of(*e)];
    ++cost.executions;
    cost.busy_ns += e->end > e->start ? e->end - e->start : 0;
    cost.waited_ns += wait;
    if (ReportInterval* at = interval_at(a, origin, e->start)) {
      at->busy_ns += e->end > e->start ? e->end - e->start : 0;
      at->waited_ns += wait;
    }
  }
  std::vector<PageFault> faults = trace.faults;
  std::stable_sort(faults.begin(), faults.end(),
                   [](const PageFault& x, const PageFault& y) { return x.start < y.start; });
  for (const PageFault& f : faults) {
    account.on_fault(f);
    if (ReportInterval* at = interval_at(a, origin, f.start); at && f.access != FaultAccess::prefetch)
      at->faults += f.fault_count;
  }
  a.gpu = account.totals();
}

// Each fault group to the kernel or copy running at its time (as the library attributes them).
void add_fault_costs(const Trace& trace, std::unordered_map<std::string, KernelCost>& costs,
                     const ExecutionNames& name_of) {
  FaultAttributor attributor;
  for (const KernelLaunch& l : trace.launches) attributor.on_launch(l);
  for (const KernelExecution& e : trace.executions) attributor.on_execution(e);
  for (const PageFault& f : trace.faults) attributor.on_fault(f);
  attributor.attribute(
      [&](const PageFault& fault, const KernelExecution& execution, const LaunchSummary*) {
        KernelCost& cost = costs[name_of(execution)];
        ++cost.fault_groups;
        cost.faults += fault.fault_count;
        cost.fault_ns += fault.end > fault.start ? fault.end - fault.start : 0;
      },
      /*final=*/true);
}

std::vector<KernelCost> most_stalled(std::unordered_map<std::string, KernelCost>& costs) {
  std::vector<KernelCost> out;
  for (auto& [name, cost] : costs) {
    cost.name = name;
    out.push_back(std::move(cost));
  }
  std::sort(out.begin(), out.end(), [](const KernelCost& x, const KernelCost& y) {
    return x.stall_ns() != y.stall_ns() ? x.stall_ns() > y.stall_ns() : x.name < y.name;
  });
  if (out.size() > kMaxReportKernels) out.resize(kMaxReportKernels);
  return out;
}

}  // namespace

TraceAnalysis analyze_trace(const Trace& trace, std::string path, std::uint64_t limit_bytes) {
  TraceAnalysis a;
  a.path = std::move(path);
  a.metadata = trace.header.metadata;
  a.launches = trace.launches.size();
  a.migrations = trace.migrations.size();
  a.hints = trace.hints.size();
  const std::uint64_t own_limit = metadata_number(a.metadata, "resident_limit_bytes");
  a.limit_bytes = own_limit != 0 ? own_limit : limit_bytes;
  const std::optional<TimeSpan> span = drawn_span(trace);
  if (!span) {
    a.residency = replay_residency(trace, a.limit_bytes);
    return a;
  }
  a.span_ns = span->last - span->first;
  a.interval_ns = std::max<Timestamp>(1, (a.span_ns + kMaxReportIntervals - 1) / kMaxReportIntervals);
  a.timeline.resize(std::min<std::size_t>(kMaxReportIntervals, a.span_ns / a.interval_ns + 1));
  add_residency(trace, span->first, a);
  const ExecutionNames name_of(trace);
  std::unordered_map<std::string, KernelCost> costs;
  add_gpu_time(trace, span->first, a, costs, name_of);
  add_fault_costs(trace, costs, name_of);
  a.kernels = most_stalled(costs);
  return a;
}

// ---- statistics ------------------------------------------------------------------------------

namespace {

using nlohmann::json;

struct FieldError {
  std::string path;
};

// The value at `path` (dotted); nullptr where absent.
const json* find_at(const json& doc, std::string_view path) {
  const json* value = &doc;
  for (std::size_t from = 0; from <= path.size();) {
    const std::size_t dot = std::min(path.find('.', from), path.size());
    const std::string key(path.substr(from, dot - from));
    if (!value->is_object() || !value->contains(key)) return nullptr;
    value = &(*value)[key];
    from = dot + 1;
  }
  return value;
}

// The number at `path`, 0 where absent; a value of another type is an error.
std::uint64_t number_at(const json& doc, std::string_view path) {
  const json* value = find_at(doc, path);
  if (value == nullptr) return 0;
  if (!value->is_number_unsigned()) throw FieldError{std::string(path)};
  return value->get<std::uint64_t>();
}

std::string string_at(const json& doc, std::string_view path) {
  const json* value = find_at(doc, path);
  if (value == nullptr) return {};
  if (!value->is_string()) throw FieldError{std::string(path)};
  return value->get<std::string>();
}

// Every scalar, by dotted path; histogram buckets and deeper nesting than deepum writes are left out.
void flatten(const json& value, const std::string& path, int depth,
             std::vector<std::pair<std::string, std::string>>& out) {
  if (value.is_object()) {
    if (depth == 6) return;
    for (const auto& [key, child] : value.items())
      flatten(child, path.empty() ? key : path + "." + key, depth + 1, out);
  } else if (value.is_string()) {
    out.emplace_back(path, value.get<std::string>());
  } else if (value.is_primitive()) {
    out.emplace_back(path, value.dump());
  }
}

LatencySummary latency_at(const json& doc, const std::string& path) {
  LatencySummary l;
  l.count = number_at(doc, path + ".count");
  l.total_ns = number_at(doc, path + ".total_ns");
  l.p50_ns = number_at(doc, path + ".p50_ns");
  l.p99_ns = number_at(doc, path + ".p99_ns");
  l.max_ns = number_at(doc, path + ".max_ns");
  const json* buckets = find_at(doc, path + ".buckets");
  if (buckets == nullptr) return l;
  if (!buckets->is_array()) throw FieldError{path + ".buckets"};
  for (const json& bucket : *buckets) {
    if (!bucket.is_array() || bucket.size() != 2 || !bucket[0].is_number_unsigned() ||
        !bucket[1].is_number_unsigned())
      throw FieldError{path + ".buckets"};
    l.buckets.emplace_back(bucket[0].get<std::uint64_t>(), bucket[1].get<std::uint64_t>());
  }
  return l;
}

GpuTime gpu_time_at(const json& doc) {
  GpuTime g;
  g.executions = number_at(doc, "tracing.gpu_time.executions");
  g.waits_measured = number_at(doc, "tracing.gpu_time.waits_measured");
  g.busy_ns = number_at(doc, "tracing.gpu_time.busy_ns");
  g.waited_ns = number_at(doc, "tracing.gpu_time.waited_ns");
  // Files written before the waits behind moves were told apart counted every wait as behind them.
  g.waited_behind_moves_ns = find_at(doc, "tracing.gpu_time.waited_behind_moves_ns") != nullptr
                                 ? number_at(doc, "tracing.gpu_time.waited_behind_moves_ns")
                                 : g.waited_ns;
  g.longest_wait_ns = number_at(doc, "tracing.gpu_time.longest_wait_ns");
  g.fault_ns = number_at(doc, "tracing.gpu_time.fault_ns");
  g.fault_groups = number_at(doc, "tracing.gpu_time.fault_groups");
  g.faults = number_at(doc, "tracing.gpu_time.faults");
  return g;
}

StatsView view_of(const json& doc, const std::string& path) {
  StatsView v;
  v.path = path;
  v.process = string_at(doc, "process");
  v.config = string_at(doc, "config");
  v.verdict_text = string_at(doc, "verdict.text");
  v.verdict_cause = string_at(doc, "verdict.cause");
  v.run_ns = number_at(doc, "run_ns");
  v.resident_limit_bytes = number_at(doc, "resident_limit_bytes");
  v.alloc_limit_bytes = number_at(doc, "alloc_limit_bytes");
  v.device_total_bytes = number_at(doc, "device_total_bytes");
  v.peak_managed_bytes = number_at(doc, "peak_managed_bytes");
  v.traced = doc.contains("tracing");
  v.gpu = gpu_time_at(doc);
  v.timed_launches = doc.contains("program_thread");
  if (v.timed_launches) {
    v.launch_callback = latency_at(doc, "program_thread.launch_callback");
    v.callbacks_ns = v.launch_callback.total_ns + number_at(doc, "program_thread.copy_callback.total_ns");
    v.move_calls_ns = number_at(doc, "program_thread.move_calls_ns.total");
    v.host_copy_back_ns = number_at(doc, "program_thread.host_copy_back_ns");
  }
  flatten(doc, "", 0, v.fields);
  return v;
}

}  // namespace

std::optional<StatsView> parse_stats(std::string_view text, const std::string& path, std::string& error) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    error = path + ": not a deepum statistics file (not JSON: " + e.what() + ")";
    return std::nullopt;
  }
  if (!doc.is_object() || !doc.contains("schema_version")) {
    error = path + ": not a deepum statistics file (no schema_version; stats_file writes one)";
    return std::nullopt;
  }
  const json& version = doc["schema_version"];
  if (!version.is_number_unsigned() || version.get<std::uint64_t>() < kOldestStatsSchemaVersion ||
      version.get<std::uint64_t>() > kStatsSchemaVersion) {
    error = fmt::format("{}: statistics schema_version {}: this deepum reads versions {} to {}{}", path,
                        version.dump(), kOldestStatsSchemaVersion, kStatsSchemaVersion,
                        version.is_number_unsigned() && version.get<std::uint64_t>() > kStatsSchemaVersion
                            ? "; a newer deepum wrote it, so report it with that one"
                            : "");
    return std::nullopt;
  }
  try {
    return view_of(doc, path);
  } catch (const FieldError& bad) {
    error = path + ": field " + bad.path + " has the wrong type for a deepum statistics file";
    return std::nullopt;
  }
}

// ---- finding the files -----------------------------------------------------------------------

namespace {

bool ends_with(const std::string& text, std::string_view end) { return text.ends_with(end); }

std::string without(const std::string& text, std::string_view end) {
  return text.substr(0, text.size() - end.size());
}

// A directory's one trace and one statistics file (a .json that is no Perfetto trace).
std::optional<ReportInputs> inputs_in_directory(const fs::path& dir, std::string& error) {
  std::vector<std::string> traces, stats;
  std::error_code failed;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, failed)) {
    std::error_code ignored;
    if (!entry.is_regular_file(ignored)) continue;
    const std::string name = entry.path().filename().string();
    if (ends_with(name, ".dtrace")) traces.push_back(entry.path().string());
    if (ends_with(name, ".json") && !ends_with(name, ".perfetto.json"))
      stats.push_back(entry.path().string());
  }
  if (failed) {
    error = dir.string() + ": cannot list the directory (" + failed.message() + ")";
    return std::nullopt;
  }
  std::sort(traces.begin(), traces.end());
  std::sort(stats.begin(), stats.end());
  const auto several = [&](const std::vector<std::string>& files, std::string_view what,
                           std::string_view how) {
    error = fmt::format("{}: holds {} {} ({}): {}", dir.string(), files.size(), what, fmt::join(files, ", "),
                        how);
  };
  if (traces.size() > 1) several(traces, "traces", "name the .dtrace file to report on");
  if (stats.size() > 1) several(stats, ".json files", "name the statistics file with --stats");
  if (traces.size() > 1 || stats.size() > 1) return std::nullopt;
  if (traces.empty() && stats.empty()) {
    error = dir.string() + ": holds no trace (.dtrace) and no statistics file (.json)";
    return std::nullopt;
  }
  ReportInputs in;
  if (!traces.empty()) in.trace = traces.front();
  if (!stats.empty()) in.stats = stats.front();
  in.out = (dir / "deepum-report.html").string();
  return in;
}

std::optional<ReportInputs> inputs_of(const std::string& run, std::string& error) {
  std::error_code failed;
  if (fs::is_directory(run, failed)) return inputs_in_directory(run, error);
  ReportInputs in;
  if (ends_with(run, ".dtrace")) {
    in.trace = run;
    in.out = without(run, ".dtrace") + ".html";
  } else if (ends_with(run, ".json")) {
    in.stats = run;
    in.out = without(run, ".json") + ".html";
  } else if (fs::exists(run + ".dtrace", failed)) {
    in.trace = run + ".dtrace";  // a trace_file prefix
    in.out = run + ".html";
  } else {
    error = run +
            ": no such directory, trace or statistics file (give the run's directory, its .dtrace file or "
            "trace_file prefix, or its statistics .json)";
    return std::nullopt;
  }
  return in;
}

int bad_input(std::FILE* err, std::string_view message) {
  fmt::print(err, "deepum report: {}\n", message);
  return kTraceCommandBadInput;
}

}  // namespace

std::optional<ReportInputs> find_report_inputs(const ReportRequest& request, std::string& error) {
  std::optional<ReportInputs> in = inputs_of(request.run, error);
  if (!in) return std::nullopt;
  if (!request.stats.empty()) in->stats = request.stats;
  if (!request.out.empty()) in->out = request.out;
  return in;
}

int run_report_command(const ReportRequest& request, std::FILE* out, std::FILE* err) {
  try {
    std::string error;
    const std::optional<ReportInputs> in = find_report_inputs(request, error);
    if (!in) return bad_input(err, error);
    std::optional<StatsView> stats;
    if (!in->stats.empty()) {
      const std::optional<std::string> text = read_regular_file(in->stats, kMaxStatsBytes, error);
      if (!text) return bad_input(err, error);
      if (!(stats = parse_stats(*text, in->stats, error))) return bad_input(err, error);
    }
    std::optional<TraceAnalysis> trace;
    if (!in->trace.empty()) {
      const TraceReadResult read = read_trace(in->trace);
      if (!read) return bad_input(err, read.error);
      trace = analyze_trace(*read.trace, in->trace, stats ? stats->resident_limit_bytes : 0);
    }
    if (!write_output_file(in->out, render_report_html(trace, stats), error)) {
      fmt::print(err, "deepum report: {}: {}\n", in->out, error);
      return kTraceCommandFailed;
    }
    fmt::print(out, "wrote {} (from {}{}{})\n", in->out, in->trace,
               !in->trace.empty() && stats ? " and " : "", stats ? in->stats : "");
    return kTraceCommandDone;
  } catch (const std::bad_alloc&) {
    fmt::print(err, "deepum report: out of memory\n");
  } catch (const std::exception& e) {  // a filesystem error, fmt's writes to a closed output
    fmt::print(err, "deepum report: {}\n", e.what());
  }
  return kTraceCommandFailed;
}

}  // namespace deepum::core
