// render_json(): the stats_file's document, every counter a field of its own. The layout is
// documented field by field in docs/stats-format.md (a unit test holds the two together).
#include <nlohmann/json.hpp>

#include "deepum/core/exit_report.hpp"

namespace deepum::core {

namespace {

using nlohmann::json;

json percentiles_json(const Percentiles& p) { return {{"p50", p.p50}, {"p99", p.p99}, {"max", p.max}}; }

json latency_json(const LatencySummary& l) {
  json buckets = json::array();
  for (const auto& [upper_ns, count] : l.buckets) buckets.push_back({upper_ns, count});
  return {{"count", l.count},   {"total_ns", l.total_ns}, {"p50_ns", l.p50_ns},
          {"p99_ns", l.p99_ns}, {"max_ns", l.max_ns},     {"buckets", buckets}};
}

json devices_json(const StatisticsSnapshot& s) {
  json devices = json::array();
  for (const StatisticsSnapshot::Device& d : s.devices) {
    devices.push_back({{"device", d.device},
                       {"alloc_limit_bytes", d.alloc_limit_bytes},
                       {"peak_managed_bytes", d.peak_managed_bytes}});
  }
  return devices;
}

json calls_json(const StatisticsSnapshot& s) {
  json calls = json::object();
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) {
    const ApiCounters& c = s.per_api[i];
    if (c.calls == 0) continue;
    calls[std::string(kInterceptedApiNames[i])] = {
        {"calls", c.calls}, {"refused", c.refused}, {"failed", c.failed}, {"bytes", c.bytes}};
  }
  return calls;
}

json gpu_time_json(const GpuTime& g) {
  return {{"executions", g.executions},
          {"waits_measured", g.waits_measured},
          {"busy_ns", g.busy_ns},
          {"waited_ns", g.waited_ns},
          {"waited_behind_moves_ns", g.waited_behind_moves_ns},
          {"longest_wait_ns", g.longest_wait_ns},
          {"fault_ns", g.fault_ns},
          {"fault_groups", g.fault_groups},
          {"faults", g.faults}};
}

json tracing_json(const PipelineStats& t, const std::string& status) {
  return {
      {"status", status},
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
      {"gpu_time", gpu_time_json(t.gpu_time)},
  };
}

json tracer_json(const TracerCounters& t) {
  json by_api = json::object();
  for (const auto& [name, count] : t.launches_by_api) by_api[name] = count;
  return {{"launches", t.launches},
          {"graph_launches", t.graph_launches},
          {"launches_by_api", by_api},
          {"launches_with_managed_pointers", t.launches_with_managed_pointers},
          {"launches_pointers_truncated", t.launches_pointers_truncated},
          {"launches_packed_buffer", t.launches_packed_buffer},
          {"launches_without_layout", t.launches_without_layout},
          {"copies", t.copies},
          {"copies_with_managed_operands", t.copies_with_managed_operands},
          {"pointer_tables", t.pointer_tables},
          {"layouts_learned", t.layouts_learned},
          {"layouts_unknown", t.layouts_unknown},
          {"modules_unloaded", t.modules_unloaded},
          {"callback_exceptions", t.callback_exceptions},
          {"records_dropped", t.records_dropped},
          {"records_incomplete", t.records_incomplete},
          {"record_errors", t.record_errors},
          {"buffers_refused", t.buffers_refused},
          {"polls_skipped_capturing", t.polls_skipped_capturing},
          {"kernel_record_pauses", t.kernel_record_pauses},
          {"kernel_records_paused_ns", t.kernel_records_paused_ns},
          {"kernel_records_filtered", t.kernel_records_filtered}};
}

json program_thread_json(const ProgramThreadCost& p) {
  return {{"launch_callback", latency_json(p.launch_callback)},
          {"copy_callback", latency_json(p.copy_callback)},
          {"move_calls_ns",
           {{"evictions", p.eviction_calls_ns},
            {"discards", p.discard_calls_ns},
            {"prefetches", p.prefetch_calls_ns},
            {"placements", p.placement_calls_ns},
            {"total", p.move_calls_ns()}}},
          {"placement_copy_calls_ns", p.placement_copy_calls_ns},
          {"host_copy_back_ns", p.host_copy_back_ns},
          {"eviction_thread_waits_ns", p.eviction_thread_waits_ns}};
}

json moves_json(const LaunchOrderedStats& m) {
  return {{"operations", m.launches},
          {"copies", m.copies},
          {"evictions", m.evictions},
          {"evicted_bytes", m.evicted_bytes},
          {"waited_evictions", m.waited_evictions},
          {"waits_for_pending", m.waits_for_pending},
          {"peak_named_bytes", m.peak_bytes},
          {"launches_over_limit", m.launches_over_limit},
          {"fetches", m.fetches},
          {"fetched_bytes", m.fetched_bytes},
          {"fetch_skipped_bytes", m.fetch_skipped_bytes},
          {"discarded_bytes", m.discarded_bytes},
          {"placed_bytes", m.placed_bytes},
          {"dead_returned_bytes", m.dead_returned_bytes},
          {"swapped_out_bytes", m.swapped_out_bytes},
          {"restored_bytes", m.restored_bytes},
          {"unswapped_bytes", m.unswapped_bytes},
          {"unswaps", m.unswaps},
          {"swap_peak_bytes", m.swap_peak_bytes},
          {"swap_skipped_other_stream_bytes", m.swap_skipped_other_stream_bytes},
          {"swapped_after_other_streams_bytes", m.swapped_after_other_streams_bytes},
          {"victims_unenqueued_blocks", m.victims_unenqueued_blocks},
          {"spare_victims_skipped_blocks", m.spare_victims_skipped_blocks},
          {"peak_evictions", m.peak_evictions},
          {"peak_evicted_bytes", m.peak_evicted_bytes},
          {"swaps_held_by_unenqueued", m.swaps_held_by_unenqueued},
          {"restored_ahead_bytes", m.restored_ahead_bytes},
          {"other_device_uses", m.other_device_uses},
          {"other_device_bytes", m.other_device_bytes},
          {"loop_period", m.loop_period},
          {"shape_loop_period", m.shape_loop_period},
          {"planning_period", m.planning_period},
          {"namings_checked", m.namings_checked},
          {"namings_repeated", m.namings_repeated},
          {"victims_predicted_bytes", m.victims_predicted_bytes},
          {"victims_unpredicted_bytes", m.victims_unpredicted_bytes}};
}

json engine_json(const EngineCounters& e) {
  return {{"moves", moves_json(e.moves)},
          {"evictions_after_marker", e.evictions_after_marker},
          {"placements_after_marker", e.placements_after_marker},
          {"skipped_capturing", e.skipped_capturing},
          {"skipped_busy", e.skipped_busy},
          {"held_by_value_waits", e.held_by_value_waits},
          {"eviction_failures", e.eviction_failures},
          {"prefetch_failures", e.prefetch_failures},
          {"swap_store_pinned_bytes", e.swap_store_pinned_bytes},
          {"swap_store_pin_ns", e.swap_store_pin_ns},
          {"swap_store_error", e.swap_store_error},
          {"eviction_thread",
           {{"running", e.eviction_thread},
            {"own_context", e.eviction_thread_own_context},
            {"move_calls_ns", e.eviction_thread_ns},
            {"copy_calls_ns", e.eviction_thread_copy_calls_ns},
            {"drops_ns", e.eviction_thread_drops_ns},
            {"drop_copy_waits_ns", e.eviction_thread_drop_copy_waits_ns},
            {"drop_calls_ns", e.eviction_thread_drop_calls_ns}}}};
}

void add_runtime(json& doc, const RuntimeCounters& r) {
  doc["tracer"] = tracer_json(r.tracer);
  doc["program_thread"] = program_thread_json(r.program_thread);
  if (r.engine) doc["engine"] = engine_json(*r.engine);
  if (!r.device_engines.empty()) {
    json engines = json::array();
    for (const DeviceEngineCounters& d : r.device_engines) {
      json one = engine_json(d.engine);
      one["device"] = d.device;
      one["resident_limit_bytes"] = d.resident_limit_bytes;
      engines.push_back(std::move(one));
    }
    doc["engines_by_device"] = std::move(engines);
  }
}

}  // namespace

std::string render_json(const ExitReport& r) {
  const StatisticsSnapshot& s = r.allocations;
  json doc = {
      {"schema_version", kStatsSchemaVersion},
      {"process", r.process},
      {"config", r.config_origin},
      {"run_ns", r.run_ns},
      {"device_total_bytes", s.device_total_bytes},
      {"alloc_limit_bytes", s.alloc_limit_bytes},
      {"resident_limit_bytes", s.resident_limit_bytes},
      {"devices", devices_json(s)},
      {"calls", calls_json(s)},
      {"managed_allocations", s.managed_allocations},
      {"managed_bytes_total", s.managed_bytes_total},
      {"live_managed_allocations", s.live_managed_allocations},
      {"live_managed_bytes", s.live_managed_bytes},
      {"peak_managed_bytes", s.peak_managed_bytes},
      {"passthrough_frees", s.passthrough_frees},
      {"entry_points_via_dlsym", s.entry_points_via_dlsym},
      {"entry_points_via_get_proc_address", s.entry_points_via_get_proc_address},
  };
  if (r.tracing) doc["tracing"] = tracing_json(*r.tracing, r.tracing_status);
  if (r.runtime) add_runtime(doc, *r.runtime);
  const Verdict verdict = judge(r);
  doc["verdict"] = {{"cause", cause_name(verdict.cause)}, {"text", verdict.text}};
  return doc.dump(2) + "\n";
}

}  // namespace deepum::core
