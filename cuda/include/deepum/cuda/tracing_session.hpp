// TracingSession: the running half of deepum. Started right before the program's first managed
// allocation (CUPTI must see its unified-memory counters configured before that), it connects the
// CUPTI tracer to the session's EventPipeline and runs the worker thread that drives the pipeline
// with a DriverHintExecutor. Stopped at exit, before the CUDA runtime tears itself down.
#pragma once

#include <cstdint>

#include "deepum/core/session.hpp"

namespace deepum::cuda {

// On the program's thread, inside the first allocation hook, with its context current. Runs once
// per process; later calls return at once. Never throws; failures are logged once and the
// program runs on untraced.
void start_tracing(core::Session& session);

// Allocation hooks report the ranges deepum made or freed.
void note_range_allocated(core::Session& session, std::uint64_t address, std::uint64_t bytes);
// Before the range goes back to the driver: once it has, another thread may be handed the same
// address, and the evictions before launches must not confuse the two. `freed` false (the driver
// refused the free) puts the range back.
void note_range_freeing(std::uint64_t address, std::uint64_t bytes, bool freed);
void note_range_freed(core::Session& session, std::uint64_t address, std::uint64_t bytes);

// In the child after fork(): the parent's tracer and worker are not the child's.
void abandon_tracing_after_fork();

}  // namespace deepum::cuda
