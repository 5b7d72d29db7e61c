#include "deepum/cuda/runtime_counters.hpp"

#include "deepum/cuda/stream_ordered_evictor.hpp"

namespace deepum::cuda {

namespace {

core::TracerCounters tracer_counters(const cupti_tracer::TracerStats& s) {
  core::TracerCounters t;
  t.launches = s.launches;
  t.graph_launches = s.graph_launches;
  for (std::size_t i = 0; i < cupti_tracer::kLaunchApiCount; ++i) {
    if (s.launches_by_api[i] != 0)
      t.launches_by_api.emplace_back(cupti_tracer::launch_api_name(i), s.launches_by_api[i]);
  }
  t.launches_with_managed_pointers = s.launches_with_managed_pointers;
  t.launches_pointers_truncated = s.launches_pointers_truncated;
  t.launches_packed_buffer = s.launches_packed_buffer;
  t.launches_without_layout = s.launches_without_layout;
  t.copies = s.copies;
  t.copies_with_managed_operands = s.copies_with_managed_operands;
  t.pointer_tables = s.pointer_tables;
  t.layouts_learned = s.layouts.from_function + s.layouts.from_kernel;
  t.layouts_unknown = s.layouts.unknown;
  t.modules_unloaded = s.layouts.unloads;
  t.callback_exceptions = s.callback_exceptions;
  t.records_dropped = s.dropped_records;
  t.records_incomplete = s.records[cupti_tracer::RecordClass::incomplete];
  t.record_errors = s.record_errors;
  t.buffers_refused = s.buffers_refused;
  t.polls_skipped_capturing = s.polls_skipped_capturing;
  t.kernel_records_filtered = s.kernel_records_filtered;
  return t;
}

}  // namespace

core::EngineCounters engine_counters(StreamOrderedEvictor& evictor) {
  core::EngineCounters e;
  e.moves = evictor.stats();
  e.evictions_after_marker = evictor.evictions_after_marker();
  e.placements_after_marker = evictor.placements_after_marker();
  e.skipped_capturing = evictor.skipped_capturing();
  e.skipped_busy = evictor.skipped_busy();
  e.held_by_value_waits = evictor.held_by_value_waits();
  e.eviction_failures = evictor.failures();
  e.prefetch_failures = evictor.prefetch_failures();
  e.swap_store_pinned_bytes = evictor.swap_store_pinned_bytes();
  e.swap_store_pin_ns = evictor.swap_store_pin_ns();
  e.swap_store_error = evictor.swap_store_error();
  e.eviction_thread = evictor.has_eviction_thread();
  e.eviction_thread_own_context = evictor.eviction_thread_has_own_context();
  const StreamOrderedEvictor::EnqueueTimes held = evictor.enqueue_times();
  e.eviction_thread_ns = held.eviction_thread_ns;
  e.eviction_thread_copy_calls_ns = held.eviction_thread_copy_calls_ns;
  e.eviction_thread_drops_ns = held.eviction_thread_drops_ns;
  e.eviction_thread_drop_copy_waits_ns = held.eviction_thread_drop_copy_waits_ns;
  e.eviction_thread_drop_calls_ns = held.eviction_thread_drop_calls_ns;
  return e;
}

core::RuntimeCounters collect_runtime_counters(const cupti_tracer::TracerStats& tracer,
                                               StreamOrderedEvictor* evictor) {
  core::RuntimeCounters out;
  out.tracer = tracer_counters(tracer);
  out.program_thread.launch_callback = tracer.launch_callback;
  out.program_thread.copy_callback = tracer.copy_callback;
  if (evictor != nullptr) {
    const StreamOrderedEvictor::EnqueueTimes held = evictor->enqueue_times();
    out.program_thread.eviction_calls_ns = held.evictions_ns;
    out.program_thread.discard_calls_ns = held.discards_ns;
    out.program_thread.prefetch_calls_ns = held.prefetches_ns;
    out.program_thread.placement_calls_ns = held.placements_ns;
    out.program_thread.placement_copy_calls_ns = held.placement_copy_calls_ns;
    out.program_thread.host_copy_back_ns = evictor->host_copy_back_ns();
    out.program_thread.eviction_thread_waits_ns = held.eviction_thread_waits_ns;
    out.engine = engine_counters(*evictor);
  }
  return out;
}

}  // namespace deepum::cuda
