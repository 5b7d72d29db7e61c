#include "deepum/core/statistics.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace deepum::core {

void Statistics::count_allocated(InterceptedApi api, std::uint64_t bytes) {
  at(api).bytes.fetch_add(bytes, std::memory_order_relaxed);
  managed_allocations_.fetch_add(1, std::memory_order_relaxed);
  managed_bytes_total_.fetch_add(bytes, std::memory_order_relaxed);
}

StatisticsSnapshot Statistics::snapshot() const {
  StatisticsSnapshot out;
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) {
    out.per_api[i].calls = per_api_[i].calls.load(std::memory_order_relaxed);
    out.per_api[i].refused = per_api_[i].refused.load(std::memory_order_relaxed);
    out.per_api[i].failed = per_api_[i].failed.load(std::memory_order_relaxed);
    out.per_api[i].bytes = per_api_[i].bytes.load(std::memory_order_relaxed);
  }
  out.managed_allocations = managed_allocations_.load(std::memory_order_relaxed);
  out.managed_bytes_total = managed_bytes_total_.load(std::memory_order_relaxed);
  out.passthrough_frees = passthrough_frees_.load(std::memory_order_relaxed);
  out.entry_points_via_dlsym = via_dlsym_.load(std::memory_order_relaxed);
  out.entry_points_via_get_proc_address = via_gpa_.load(std::memory_order_relaxed);
  return out;
}

void Statistics::reset() {
  for (auto& c : per_api_) {
    c.calls = 0;
    c.refused = 0;
    c.failed = 0;
    c.bytes = 0;
  }
  managed_allocations_ = 0;
  managed_bytes_total_ = 0;
  passthrough_frees_ = 0;
  via_dlsym_ = 0;
  via_gpa_ = 0;
}

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024) return std::to_string(bytes) + " B";
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  return fmt::format("{:.2f} {}", value, kUnits[unit]);
}

namespace {

template <typename... Args>
void append_line(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  out += fmt::format(format, std::forward<Args>(args)...);
  out += '\n';
}

}  // namespace

std::string render_summary(const StatisticsSnapshot& s, const std::string& header) {
  std::string out = "deepum summary: " + header + "\n";
  append_line(out, "  limits: allocation {}, resident {}", format_bytes(s.alloc_limit_bytes),
              format_bytes(s.resident_limit_bytes));
  for (const StatisticsSnapshot::Device& d : s.devices) {
    append_line(out, "  device {}: allocation limit {}, peak {}", d.device, format_bytes(d.alloc_limit_bytes),
                format_bytes(d.peak_managed_bytes));
  }
  append_line(out, "  {:<20} {:>10} {:>8} {:>8} {:>14}", "intercepted call", "calls", "refused", "failed",
              "bytes");
  bool any = false;
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) {
    const ApiCounters& c = s.per_api[i];
    if (c.calls == 0) continue;
    any = true;
    append_line(out, "  {:<20} {:>10} {:>8} {:>8} {:>14}", kInterceptedApiNames[i], c.calls, c.refused,
                c.failed, c.bytes ? format_bytes(c.bytes) : std::string("-"));
  }
  if (!any) out += "  (no intercepted calls)\n";
  append_line(out, "  managed allocations: {} ({} in all), live at exit {} ({}), peak {}",
              s.managed_allocations, format_bytes(s.managed_bytes_total), s.live_managed_allocations,
              format_bytes(s.live_managed_bytes), format_bytes(s.peak_managed_bytes));
  append_line(out, "  frees passed through (not deepum's memory): {}", s.passthrough_frees);
  append_line(out, "  driver entry points substituted: {} via dlsym, {} via cuGetProcAddress",
              s.entry_points_via_dlsym, s.entry_points_via_get_proc_address);
  return out;
}

std::string render_tracing_summary(const PipelineStats& t, const std::string& status) {
  std::string out;
  append_line(out, "  tracing: {}", status.empty() ? std::string("on") : status);
  const double pointer_share = t.launches ? 100.0 * static_cast<double>(t.launches_with_managed_pointers) /
                                                static_cast<double>(t.launches)
                                          : 0.0;
  append_line(out,
              "  kernel launches: {} ({:.1f}% with managed pointer arguments, {} dropped), executions: {}",
              t.launches, pointer_share, t.launches_dropped, t.executions);
  const std::uint64_t decided = t.attribution.attributed + t.attribution.unattributed;
  const double attributed_share =
      decided ? 100.0 * static_cast<double>(t.attribution.attributed) / static_cast<double>(decided) : 0.0;
  append_line(
      out,
      "  GPU page faults: {} in {} records ({} raised by prefetches, {} while kernel records were paused); "
      "{:.1f}% of the others attributed to a kernel or copy",
      t.faults, t.fault_records, t.attribution.from_prefetch, t.attribution.while_unrecorded,
      attributed_share);
  append_line(out,
              "  migrated to GPU: {} in {} transfers; to host: {} in {} transfers ({} evicted by the driver)",
              format_bytes(t.bytes_to_gpu), t.migrations_to_gpu, format_bytes(t.bytes_to_host),
              t.migrations_to_host, format_bytes(t.bytes_to_host_by_eviction));
  append_line(out, "  deepum evictions: {} ({}), {} refused by the driver{}", t.deepum_evictions,
              format_bytes(t.deepum_evicted_bytes), t.deepum_eviction_failures,
              t.launch_evicted_bytes != 0
                  ? "; before launches, in their streams: " + format_bytes(t.launch_evicted_bytes)
                  : std::string());
  if (t.launch_prefetched_bytes != 0) {
    append_line(out, "  deepum prefetches before launches, in their streams: {}",
                format_bytes(t.launch_prefetched_bytes));
  }
  if (t.eviction_headroom_bytes != 0) {
    append_line(out, "  eviction headroom: {} at the end ({} overshoots of the limit widened it)",
                format_bytes(t.eviction_headroom_bytes), t.overshoots);
  }
  if (t.thrashing_records + t.throttling_records + t.remote_map_records != 0) {
    append_line(
        out,
        "  driver against thrashing: {} regions seen thrashing ({}), {} throttles, {} remote mappings "
        "({}, {} of them for thrashing): mapped memory is used over the link, not resident",
        t.thrashing_records, format_bytes(t.thrashing_bytes), t.throttling_records, t.remote_map_records,
        format_bytes(t.remote_map_bytes), format_bytes(t.remote_map_bytes_for_thrashing));
  }
  if (t.replayed_ms != 0 || t.peak_resident_bytes != 0) {
    auto seconds = [](std::uint64_t ms) { return static_cast<double>(ms) / 1e3; };
    append_line(
        out,
        "  peak resident: {} by the migration records in time order; over the limit {:.1f} s, over it "
        "by 5% {:.1f} s, of {:.1f} s ({} records later than {:.0f} s)",
        format_bytes(t.peak_resident_bytes), seconds(t.over_limit_ms), seconds(t.over_limit_5pct_ms),
        seconds(t.replayed_ms), t.records_out_of_order, static_cast<double>(EventPipeline::kSettleNs) / 1e9);
  }
  // The driver keeps the GPU pages of evicted ranges for them (measured on an H100), so its figure
  // is the process's GPU memory, not its residency.
  append_line(
      out,
      "  live estimate of residency: peak {} (at most {} blocks of 2 MB held any); GPU memory the driver "
      "holds for the process: {}",
      format_bytes(t.peak_estimated_resident_bytes), t.peak_resident_blocks,
      format_bytes(t.peak_measured_used_bytes));
  auto percentiles = [](const Percentiles& p) { return fmt::format("{}/{}/{}", p.p50, p.p99, p.max); };
  append_line(
      out,
      "  records reached deepum after the event, us (median/p99/max): faults {}, migrations {}, kernels {}; "
      "worker step {} us",
      percentiles(t.fault_delay_us), percentiles(t.migration_delay_us), percentiles(t.execution_delay_us),
      percentiles(t.step_us));
  if (t.prefetching) {
    const PrefetchStats& p = t.prefetch;
    append_line(out, "  prefetcher: {} plans ({} refused), prefetched {}, pre-evicted {}, discarded {}",
                p.plans, p.plan_failures, format_bytes(p.prefetched_bytes), format_bytes(p.pre_evicted_bytes),
                format_bytes(p.discarded_bytes));
    append_line(
        out,
        "  prefetched blocks: {} timely, {} late, {} evicted unused; lookahead {} kernels, window up to {} "
        "blocks for a budget of {}{}",
        p.timely, p.late, p.wasted, p.lookahead, p.window_blocks_max, p.budget_blocks,
        p.resets ? fmt::format(", learned state reset {} times", p.resets) : std::string());
    append_line(out, "  fault records on blocks the plan predicted: {}; on blocks it did not: {}",
                p.faults_in_window, p.faults_outside_window);
  }
  return out;
}

namespace {
nlohmann::json percentiles_json(const Percentiles& p) {
  return {{"p50", p.p50}, {"p99", p.p99}, {"max", p.max}};
}

// Each device's limit and peak, where the program allocated on more than one.
nlohmann::json devices_json(const StatisticsSnapshot& s) {
  nlohmann::json devices = nlohmann::json::array();
  for (const StatisticsSnapshot::Device& d : s.devices) {
    devices.push_back({{"device", d.device},
                       {"alloc_limit_bytes", d.alloc_limit_bytes},
                       {"peak_managed_bytes", d.peak_managed_bytes}});
  }
  return devices;
}
}  // namespace

std::string render_json(const StatisticsSnapshot& s, const std::string& process,
                        const std::string& config_origin, const PipelineStats* tracing,
                        const std::string& tracing_status) {
  nlohmann::json calls = nlohmann::json::object();
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) {
    const ApiCounters& c = s.per_api[i];
    if (c.calls == 0) continue;
    calls[std::string(kInterceptedApiNames[i])] = {
        {"calls", c.calls}, {"refused", c.refused}, {"failed", c.failed}, {"bytes", c.bytes}};
  }
  nlohmann::json doc = {
      {"process", process},
      {"config", config_origin},
      {"alloc_limit_bytes", s.alloc_limit_bytes},
      {"resident_limit_bytes", s.resident_limit_bytes},
      {"devices", devices_json(s)},
      {"calls", calls},
      {"managed_allocations", s.managed_allocations},
      {"managed_bytes_total", s.managed_bytes_total},
      {"live_managed_allocations", s.live_managed_allocations},
      {"live_managed_bytes", s.live_managed_bytes},
      {"peak_managed_bytes", s.peak_managed_bytes},
      {"passthrough_frees", s.passthrough_frees},
      {"entry_points_via_dlsym", s.entry_points_via_dlsym},
      {"entry_points_via_get_proc_address", s.entry_points_via_get_proc_address},
  };
  if (tracing != nullptr) {
    const PipelineStats& t = *tracing;
    doc["tracing"] = {
        {"status", tracing_status},
        {"launches", t.launches},
        {"launches_with_managed_pointers", t.launches_with_managed_pointers},
        {"launches_dropped", t.launches_dropped},
        {"executions", t.executions},
        {"fault_records", t.fault_records},
        {"faults", t.faults},
        {"fault_records_attributed", t.attribution.attributed},
        {"fault_records_from_prefetch", t.attribution.from_prefetch},
        {"fault_records_while_kernel_records_paused", t.attribution.while_unrecorded},
        {"fault_records_unattributed", t.attribution.unattributed},
        {"migrations_to_gpu", t.migrations_to_gpu},
        {"bytes_to_gpu", t.bytes_to_gpu},
        {"migrations_to_host", t.migrations_to_host},
        {"bytes_to_host", t.bytes_to_host},
        {"bytes_to_host_by_driver_eviction", t.bytes_to_host_by_eviction},
        {"deepum_evictions", t.deepum_evictions},
        {"deepum_evicted_bytes", t.deepum_evicted_bytes},
        {"deepum_eviction_failures", t.deepum_eviction_failures},
        {"eviction_headroom_bytes", t.eviction_headroom_bytes},
        {"overshoots", t.overshoots},
        {"launch_evicted_bytes", t.launch_evicted_bytes},
        {"launch_prefetched_bytes", t.launch_prefetched_bytes},
        {"thrashing_records", t.thrashing_records},
        {"thrashing_bytes", t.thrashing_bytes},
        {"throttling_records", t.throttling_records},
        {"remote_map_records", t.remote_map_records},
        {"remote_map_bytes", t.remote_map_bytes},
        {"remote_map_bytes_for_thrashing", t.remote_map_bytes_for_thrashing},
        {"peak_resident_bytes", t.peak_resident_bytes},
        {"over_limit_ms", t.over_limit_ms},
        {"over_limit_5pct_ms", t.over_limit_5pct_ms},
        {"replayed_ms", t.replayed_ms},
        {"records_out_of_order", t.records_out_of_order},
        {"peak_estimated_resident_bytes", t.peak_estimated_resident_bytes},
        {"peak_resident_blocks", t.peak_resident_blocks},
        {"peak_measured_used_bytes", t.peak_measured_used_bytes},
        {"fault_delay_us", percentiles_json(t.fault_delay_us)},
        {"execution_delay_us", percentiles_json(t.execution_delay_us)},
        {"migration_delay_us", percentiles_json(t.migration_delay_us)},
        {"worker_step_us", percentiles_json(t.step_us)},
    };
    if (t.prefetching) {
      const PrefetchStats& p = t.prefetch;
      doc["tracing"]["prefetch"] = {
          {"plans", p.plans},
          {"plan_failures", p.plan_failures},
          {"prefetched_bytes", p.prefetched_bytes},
          {"pre_evicted_bytes", p.pre_evicted_bytes},
          {"discarded_bytes", p.discarded_bytes},
          {"timely", p.timely},
          {"late", p.late},
          {"wasted", p.wasted},
          {"lookahead", p.lookahead},
          {"window_blocks_max", p.window_blocks_max},
          {"budget_blocks", p.budget_blocks},
          {"resets", p.resets},
          {"faults_in_window", p.faults_in_window},
          {"faults_outside_window", p.faults_outside_window},
      };
    }
  }
  return doc.dump(2) + "\n";
}

}  // namespace deepum::core
