#include "deepum/core/exit_report.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace deepum::core {

std::string format_duration(std::uint64_t ns) {
  const auto value = static_cast<double>(ns);
  if (ns >= 1'000'000'000) return fmt::format("{:.2f} s", value / 1e9);
  if (ns >= 1'000'000) return fmt::format("{:.1f} ms", value / 1e6);
  if (ns >= 1'000) return fmt::format("{:.1f} us", value / 1e3);
  return fmt::format("{} ns", ns);
}

namespace {

template <typename... Args>
void append_line(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  out += fmt::format(format, std::forward<Args>(args)...);
  out += '\n';
}

void memory_lines(std::string& out, const ExitReport& r) {
  const StatisticsSnapshot& s = r.allocations;
  append_line(
      out,
      "  memory: peak {} managed in {} allocations ({} live at exit); limits: allocation {}, resident {}{}",
      format_bytes(s.peak_managed_bytes), s.managed_allocations, s.live_managed_allocations,
      format_bytes(s.alloc_limit_bytes), format_bytes(s.resident_limit_bytes),
      r.allocations.device_total_bytes != 0 ? ", GPU " + format_bytes(r.allocations.device_total_bytes)
                                            : std::string());
  for (const StatisticsSnapshot::Device& d : s.devices) {
    append_line(out, "  device {}: allocation limit {}, peak {}", d.device, format_bytes(d.alloc_limit_bytes),
                format_bytes(d.peak_managed_bytes));
  }
}

// The intercepted calls, most called first, at most four named.
void calls_line(std::string& out, const StatisticsSnapshot& s) {
  std::vector<std::size_t> called;
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) {
    if (s.per_api[i].calls != 0) called.push_back(i);
  }
  std::stable_sort(called.begin(), called.end(),
                   [&](std::size_t x, std::size_t y) { return s.per_api[x].calls > s.per_api[y].calls; });
  std::string line;
  for (std::size_t n = 0; n < called.size() && n < 4; ++n) {
    const ApiCounters& c = s.per_api[called[n]];
    if (n != 0) line += ", ";
    line += fmt::format("{} {}", kInterceptedApiNames[called[n]], c.calls);
    if (c.refused != 0 || c.failed != 0) line += fmt::format(" ({} refused, {} failed)", c.refused, c.failed);
  }
  if (called.size() > 4) line += fmt::format(", {} more", called.size() - 4);
  append_line(out, "  calls: {}", line.empty() ? std::string("none") : line);
}

void tracing_line(std::string& out, const ExitReport& r) {
  std::string line = r.tracing_status.empty() ? std::string("on") : r.tracing_status;
  if (r.runtime) {
    const TracerCounters& t = r.runtime->tracer;
    line += fmt::format("; {} launches, {} copies seen; {} records dropped", t.launches + t.graph_launches,
                        t.copies, t.records_dropped);
  }
  append_line(out, "  tracing: {}", line);
}

void moves_line(std::string& out, const PipelineStats& t, const EngineCounters* e) {
  if (e == nullptr) {
    append_line(out, "  moves (driver's records): to GPU {}, to host {}; {} page faults",
                format_bytes(t.bytes_to_gpu), format_bytes(t.bytes_to_host), t.faults);
    return;
  }
  const LaunchOrderedStats& m = e->moves;
  const std::uint64_t not_written = m.discarded_bytes + m.swapped_out_bytes;
  const std::uint64_t by_driver = m.evicted_bytes > not_written ? m.evicted_bytes - not_written : 0;
  append_line(out, "  to GPU: {} fetched, {} swapped in, {} placed without a copy; {} page faults",
              format_bytes(m.fetched_bytes), format_bytes(m.restored_bytes + m.restored_ahead_bytes),
              format_bytes(m.placed_bytes), t.faults);
  append_line(out, "  to host: {} swapped out, {} written back by the driver, {} dropped dead",
              format_bytes(m.swapped_out_bytes), format_bytes(by_driver), format_bytes(m.discarded_bytes));
}

void loop_line(std::string& out, const EngineCounters* e) {
  if (e == nullptr) return;
  const LaunchOrderedStats& m = e->moves;
  if (m.loop_period != 0) {
    append_line(out,
                "  loop: {} operations, learned from repeated addresses; victims {} by predicted next use, "
                "{} swapped in ahead",
                m.loop_period, format_bytes(m.victims_predicted_bytes), format_bytes(m.restored_ahead_bytes));
  } else if (m.shape_loop_period != 0) {
    // Whether the step's 2 MB blocks came back one period later, as planning needs.
    const std::uint64_t repeated = m.namings_checked == 0 ? 0 : 100 * m.namings_repeated / m.namings_checked;
    if (m.victims_predicted_bytes != 0 || m.restored_ahead_bytes != 0) {
      append_line(out,
                  "  loop: {} operations, learned from repeated shapes ({}% of blocks named a period earlier "
                  "too); victims {} by predicted next use, {} swapped in ahead",
                  m.shape_loop_period, repeated, format_bytes(m.victims_predicted_bytes),
                  format_bytes(m.restored_ahead_bytes));
    } else {
      append_line(
          out,
          "  loop: shapes repeat every {} operations, blocks do not ({}% named a period earlier too); "
          "moves decided at each launch",
          m.shape_loop_period, repeated);
    }
  }
}

void held_line(std::string& out, const EngineCounters* e) {
  if (e == nullptr || e->held_by_value_waits == 0) return;
  append_line(out,
              "  held: {} operations moved nothing while a stream memory wait of the program's might still "
              "wait (docs/configuration.md, Modes)",
              e->held_by_value_waits);
}

void residency_line(std::string& out, const ExitReport& r) {
  const PipelineStats& t = *r.tracing;
  if (t.replayed_ms == 0 && t.peak_resident_bytes == 0) return;
  append_line(out, "  residency: peak {} by the driver's records in time order (limit {}), over the limit {}",
              format_bytes(t.peak_resident_bytes), format_bytes(r.allocations.resident_limit_bytes),
              format_duration(t.over_limit_ms * 1'000'000));
}

void program_thread_line(std::string& out, const ExitReport& r) {
  const ProgramThreadCost& p = r.runtime->program_thread;
  append_line(
      out,
      "  program thread: in deepum {}{} (per launch median {}, p99 {}); in the driver's move calls {}{}{}",
      format_duration(p.callbacks_ns()), r.run_ns != 0 ? " of a " + format_duration(r.run_ns) + " run" : "",
      format_duration(p.launch_callback.p50_ns), format_duration(p.launch_callback.p99_ns),
      format_duration(p.move_calls_ns()),
      p.eviction_thread_waits_ns != 0
          ? ", waiting for the eviction thread " + format_duration(p.eviction_thread_waits_ns) +
                " (most of it within them)"
          : std::string(),
      p.host_copy_back_ns != 0 ? ", copying swapped blocks back " + format_duration(p.host_copy_back_ns)
                               : std::string());
}

// What paces the room the launches wait for: the eviction thread's copies out and its drops after
// them, one eviction after the other.
void eviction_thread_line(std::string& out, const EngineCounters* e) {
  if (e == nullptr || !e->eviction_thread || e->eviction_thread_ns == 0) return;
  append_line(out,
              "  eviction thread: in move calls {} (copies into the store {}; drops {}, of them waiting for "
              "the copies {}, drop calls {})",
              format_duration(e->eviction_thread_ns), format_duration(e->eviction_thread_copy_calls_ns),
              format_duration(e->eviction_thread_drops_ns),
              format_duration(e->eviction_thread_drop_copy_waits_ns),
              format_duration(e->eviction_thread_drop_calls_ns));
}

// Pinning host memory is slow, and the store grows while the first steps run, as swaps need it.
void swap_store_line(std::string& out, const EngineCounters* e) {
  if (e == nullptr || e->swap_store_pinned_bytes == 0) return;
  append_line(out, "  swap store: {} of pinned host memory, pinned in {}",
              format_bytes(e->swap_store_pinned_bytes), format_duration(e->swap_store_pin_ns));
}

void gpu_line(std::string& out, const GpuTime& g) {
  if (g.executions == 0) return;  // no kernel records
  append_line(out,
              "  GPU (summed over streams): ran {}, waited {} after work was runnable ({} behind deepum's "
              "moves), served faults {}",
              format_duration(g.busy_ns), format_duration(g.waited_ns),
              format_duration(g.waited_behind_moves_ns), format_duration(g.fault_ns));
}

}  // namespace

std::string render_summary(const ExitReport& r) {
  std::string out = fmt::format("deepum summary: {} (config: {})\n", r.process, r.config_origin);
  memory_lines(out, r);
  calls_line(out, r.allocations);
  tracing_line(out, r);
  if (r.tracing) {
    const EngineCounters* engine = r.runtime && r.runtime->engine ? &*r.runtime->engine : nullptr;
    moves_line(out, *r.tracing, engine);
    loop_line(out, engine);
    held_line(out, engine);
    residency_line(out, r);
    if (r.runtime) program_thread_line(out, r);
    eviction_thread_line(out, engine);
    swap_store_line(out, engine);
    gpu_line(out, r.tracing->gpu_time);
  }
  append_line(out, "deepum verdict: {}", judge(r).text);
  return out;
}

}  // namespace deepum::core
