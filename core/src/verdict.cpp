// judge(): the exit summary's last line. deepum does not know the program's native step time; it
// knows how long the GPU waited after work was runnable behind the moves it decided (waits of other
// launches are the program's own, as natively) and served page faults (kernel records),
// how long the program's threads spent inside its callbacks and the driver's move calls, and what
// moved. The verdict names the largest of those costs and the one change most likely to shrink it.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "deepum/core/exit_report.hpp"

namespace deepum::core {

namespace {

using Cause = Verdict::Cause;

// A cost below this share of the run is not worth a verdict of its own.
constexpr double kDominantShare = 0.05;
// Launches naming more than the limit leaves: a verdict of their own from this share of launches.
constexpr double kOverLimitShare = 0.01;

double share(std::uint64_t part, std::uint64_t whole) {
  return whole != 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string of_run(std::uint64_t ns, std::uint64_t run_ns) {
  if (run_ns == 0) return format_duration(ns);
  return fmt::format("{} ({:.0f}% of the {} run)", format_duration(ns), 100.0 * share(ns, run_ns),
                     format_duration(run_ns));
}

// Bytes the engine moved each way, by how.
struct Traffic {
  std::uint64_t to_gpu = 0, to_host = 0;
  std::uint64_t written_back_by_driver = 0;  // victims neither swapped nor dropped
};

Traffic traffic_of(const LaunchOrderedStats& m) {
  Traffic t;
  // Blocks placed without a copy move nothing.
  t.to_gpu = m.fetched_bytes + m.restored_bytes + m.restored_ahead_bytes;
  const std::uint64_t not_written = m.discarded_bytes + m.swapped_out_bytes;
  t.written_back_by_driver = m.evicted_bytes > not_written ? m.evicted_bytes - not_written : 0;
  t.to_host = m.swapped_out_bytes + t.written_back_by_driver;
  return t;
}

// What holds before any cost is weighed: nothing traced, nothing to move, no engine, or a
// setting the run outgrew.
std::optional<Verdict> precondition(const ExitReport& r) {
  const StatisticsSnapshot& a = r.allocations;
  if (!r.tracing || !r.runtime)
    return Verdict{Cause::untraced,
                   "no verdict on moves: nothing was traced (" +
                       (r.tracing_status.empty() ? std::string("tracing off") : r.tracing_status) +
                       "); memory is managed and the driver pages it on faults"};
  if (r.allocations.device_total_bytes != 0 && a.resident_limit_bytes >= r.allocations.device_total_bytes) {
    if (a.peak_managed_bytes > r.allocations.device_total_bytes)
      return Verdict{
          Cause::whole_gpu,
          fmt::format("the program held {} on a {} GPU and the resident limit is the whole GPU, so "
                      "the driver paged on faults; set resident_limit below the GPU's memory (for "
                      "example 90%) to have deepum move memory ahead of launches",
                      format_bytes(a.peak_managed_bytes), format_bytes(r.allocations.device_total_bytes))};
    return Verdict{Cause::whole_gpu, "nothing to move: the program fit the GPU (peak " +
                                         format_bytes(a.peak_managed_bytes) +
                                         ") and the resident limit is the whole GPU"};
  }
  if (!r.runtime->engine)
    return Verdict{Cause::no_engine,
                   "no engine moved memory (mode driver, or it could not start: see the log), so the "
                   "driver paged it on faults"};
  const EngineCounters& e = *r.runtime->engine;
  const std::uint64_t operations = std::max<std::uint64_t>(e.moves.launches, 1);
  if (share(e.moves.launches_over_limit, operations) >= kOverLimitShare)
    return Verdict{
        Cause::launches_over_limit,
        fmt::format("{} of {} launches named more memory than the resident limit ({}) leaves room "
                    "for, so they fault it in; raise resident_limit",
                    e.moves.launches_over_limit, e.moves.launches, format_bytes(a.resident_limit_bytes))};
  if (!e.swap_store_error.empty())
    return Verdict{Cause::swap_store_full,
                   "the swap store stopped growing (" + e.swap_store_error +
                       "), so live victims went back through the driver; raise swap_store_limit or free host "
                       "memory"};
  return std::nullopt;
}

struct Cost {
  Cause cause;
  std::uint64_t ns;
};

// The costs deepum measured, largest first. GPU figures come only with kernel records.
std::array<Cost, 5> costs_of(const ExitReport& r) {
  const ProgramThreadCost& t = r.runtime->program_thread;
  const std::uint64_t in_callbacks = t.callbacks_ns();
  const std::uint64_t held = t.move_calls_ns() + t.host_copy_back_ns;
  const GpuTime& g = r.tracing->gpu_time;
  std::array<Cost, 5> costs{{{Cause::gpu_waits, g.waited_behind_moves_ns},
                             {Cause::faults, g.fault_ns},
                             {Cause::thread_move_calls, t.move_calls_ns()},
                             {Cause::thread_copy_backs, t.host_copy_back_ns},
                             {Cause::thread_decisions, in_callbacks > held ? in_callbacks - held : 0}}};
  std::stable_sort(costs.begin(), costs.end(), [](const Cost& x, const Cost& y) { return x.ns > y.ns; });
  return costs;
}

// A kernel's wait runs from its launch call's start, so it includes the time the launch spent in
// deepum's hook whenever the GPU had run dry: where the program's thread spent at least half as
// long in deepum as the GPU waited, the thread's largest cost is the one to name.
Cost leading_cost(const ExitReport& r) {
  const std::array<Cost, 5> costs = costs_of(r);
  if (costs.front().cause != Cause::gpu_waits ||
      2 * r.runtime->program_thread.callbacks_ns() < r.tracing->gpu_time.waited_behind_moves_ns)
    return costs.front();
  for (const Cost& cost : costs) {
    if (cost.cause != Cause::gpu_waits && cost.cause != Cause::faults) return cost;
  }
  return costs.front();
}

std::string gpu_waits(const ExitReport& r) {
  const EngineCounters& e = *r.runtime->engine;
  const Traffic moved = traffic_of(e.moves);
  std::string text = fmt::format("the GPU waited {} for deepum's moves ({} to the GPU, {} to the host)",
                                 of_run(r.tracing->gpu_time.waited_behind_moves_ns, r.run_ns),
                                 format_bytes(moved.to_gpu), format_bytes(moved.to_host));
  if (e.moves.swapped_out_bytes == 0 && moved.written_back_by_driver != 0)
    return text +
           "; use mode fast, which swaps: victims are written back by the driver, slower than copies "
           "to pinned memory";
  return text + "; raise resident_limit: what does not fit under it moves every step";
}

std::string faults(const ExitReport& r) {
  const EngineCounters& e = *r.runtime->engine;
  const GpuTime& g = r.tracing->gpu_time;
  std::string text =
      fmt::format("the GPU served {} page faults for {}", g.faults, of_run(g.fault_ns, r.run_ns));
  if (e.moves.fetches == 0)
    return text +
           "; use mode fast or safe, which prefetch: what launches name is faulted in, not moved ahead";
  if (e.moves.fetch_skipped_bytes != 0)
    return text + fmt::format("; raise resident_limit: launches named more than fit, {} left to faults",
                              format_bytes(e.moves.fetch_skipped_bytes));
  return text +
         "; kernels reach memory their arguments do not name (pointers kept in GPU memory), which "
         "deepum cannot move ahead: raise resident_limit to fault less";
}

std::string thread_move_calls(const ExitReport& r) {
  const ProgramThreadCost& t = r.runtime->program_thread;
  const EngineCounters& e = *r.runtime->engine;
  std::string text = fmt::format(
      "the program's thread was held {} in the driver's move calls (evictions {}, discards {}, prefetches "
      "{}, "
      "placements {}{})",
      of_run(t.move_calls_ns(), r.run_ns), format_duration(t.eviction_calls_ns),
      format_duration(t.discard_calls_ns), format_duration(t.prefetch_calls_ns),
      format_duration(t.placement_calls_ns),
      t.eviction_thread_waits_ns != 0
          ? "; waiting for the eviction thread to issue the evictions whose room they need " +
                format_duration(t.eviction_thread_waits_ns) + ", most of it within these"
          : std::string());
  const bool evictions_most =
      t.eviction_calls_ns >= std::max({t.discard_calls_ns, t.prefetch_calls_ns, t.placement_calls_ns});
  if (evictions_most && !e.eviction_thread)
    return text +
           "; drop stream_ordered_eviction_thread=false (every mode evicts from deepum's thread): evictions "
           "then leave the program's thread";
  return text + "; raise resident_limit: fewer moves to enqueue";
}

std::string thread_copy_backs(const ExitReport& r) {
  const TracerCounters& tr = r.runtime->tracer;
  const EngineCounters& e = *r.runtime->engine;
  return fmt::format(
      "the program's thread copied swapped blocks back itself for {}, before {} operations deepum cannot "
      "read "
      "({} graph launches, {} launches without a parameter layout); use mode safe for this program (no "
      "swaps), or raise resident_limit",
      of_run(r.runtime->program_thread.host_copy_back_ns, r.run_ns), e.moves.unswaps, tr.graph_launches,
      tr.launches_without_layout);
}

std::string thread_decisions(const ExitReport& r, std::uint64_t ns) {
  const LatencySummary& l = r.runtime->program_thread.launch_callback;
  return fmt::format(
      "the program's thread spent {} in deepum's launch hook outside the driver's move calls (deciding, "
      "recording events, waiting for moves; per launch median {}, p99 {}); raise resident_limit: fewer "
      "launches need moves",
      of_run(ns, r.run_ns), format_duration(l.p50_ns), format_duration(l.p99_ns));
}

std::string nothing_dominant(const ExitReport& r) {
  const GpuTime& g = r.tracing->gpu_time;
  std::string gpu =
      g.executions == 0
          ? std::string("GPU waits unmeasured (no kernel records: tracing full measures them)")
          : fmt::format(
                "the GPU waited {:.0f}% of the run ({:.0f}% behind deepum's moves) and served faults "
                "{:.0f}%",
                100.0 * share(g.waited_ns, r.run_ns), 100.0 * share(g.waited_behind_moves_ns, r.run_ns),
                100.0 * share(g.fault_ns, r.run_ns));
  return fmt::format("no cost stands out: {}; the program's thread was in deepum {:.0f}% of the run", gpu,
                     100.0 * share(r.runtime->program_thread.callbacks_ns(), r.run_ns));
}

}  // namespace

const char* cause_name(Verdict::Cause cause) {
  switch (cause) {
    case Cause::no_calls:
      return "no_calls";
    case Cause::untraced:
      return "untraced";
    case Cause::whole_gpu:
      return "whole_gpu";
    case Cause::no_engine:
      return "no_engine";
    case Cause::launches_over_limit:
      return "launches_over_limit";
    case Cause::swap_store_full:
      return "swap_store_full";
    case Cause::gpu_waits:
      return "gpu_waits";
    case Cause::faults:
      return "faults";
    case Cause::thread_move_calls:
      return "thread_move_calls";
    case Cause::thread_copy_backs:
      return "thread_copy_backs";
    case Cause::thread_decisions:
      return "thread_decisions";
    case Cause::nothing_dominant:
      return "nothing_dominant";
  }
  return "?";
}

Verdict judge(const ExitReport& r) {
  std::uint64_t calls = 0;
  for (const ApiCounters& c : r.allocations.per_api) calls += c.calls;
  if (calls == 0) return {Cause::no_calls, "nothing was intercepted: the program made no CUDA allocation"};
  if (std::optional<Verdict> verdict = precondition(r)) return *verdict;
  const Cost top = leading_cost(r);
  // The run's length is known from deepum's first hook; without it, any measured cost may lead.
  if (top.ns == 0 || (r.run_ns != 0 && share(top.ns, r.run_ns) < kDominantShare))
    return {Cause::nothing_dominant, nothing_dominant(r)};
  switch (top.cause) {
    case Cause::gpu_waits:
      return {top.cause, gpu_waits(r)};
    case Cause::faults:
      return {top.cause, faults(r)};
    case Cause::thread_move_calls:
      return {top.cause, thread_move_calls(r)};
    case Cause::thread_copy_backs:
      return {top.cause, thread_copy_backs(r)};
    default:
      return {Cause::thread_decisions, thread_decisions(r, top.ns)};
  }
}

}  // namespace deepum::core
