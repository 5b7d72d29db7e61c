// The tracer's and the engines' counters at exit, copied into the exit report's plain structs
// (core/exit_report.hpp), which render them as the summary and the stats_file.
#pragma once

#include "deepum/core/exit_report.hpp"
#include "deepum/cupti_tracer/cupti_tracer.hpp"

namespace deepum::cuda {

class StreamOrderedEvictor;

// `evictor` may be null (no engine ran).
core::RuntimeCounters collect_runtime_counters(const cupti_tracer::TracerStats& tracer,
                                               StreamOrderedEvictor* evictor);
// One engine's counters (collect_runtime_counters' `engine`), for each device's where there are several.
core::EngineCounters engine_counters(StreamOrderedEvictor& evictor);

}  // namespace deepum::cuda
