// TracingSession: the running half of deepum. Started right before the program's first managed
// allocation (CUPTI must see its unified-memory counters configured before that), it connects the
// CUPTI tracer to the launch-ordered engine (an engine per device, which moves memory) and to the
// session's EventPipeline (which observes), and runs the worker thread that reaps the engine's moves
// and steps the pipeline. Stopped at exit, before the CUDA runtime tears itself down.
#pragma once

#include <cstdint>

#include "deepum/core/indirect_kernels.hpp"
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

// An interposed NCCL call on `stream` (the program's thread, before the real call): its buffers
// are named there as a launch's are, with what must come before them ordered in the stream; a call
// whose buffers are not known stops swaps and placement, as an NCCL kernel outside such a call does.
void before_collective(const core::CollectiveBuffers& call, std::uint64_t stream);

// Driver getters handed out a kernel handle (program thread, right after the getter returned):
// its parameter layout is learned now, outside any CUPTI callback (cupti_tracer::FunctionLayouts).
// `kernel`: a CUkernel (cuLibraryGetKernel), else a CUfunction. `owner`: its module or library.
void note_function_handed_out(std::uint64_t handle, bool kernel, std::uint64_t owner);
// Before the driver unloads a module or library: its functions' handles may name others later.
void note_module_unloading(std::uint64_t owner);

// The program is about to begin a stream capture (its own call, before the driver's): deepum's
// queries and moves stop (core::CaptureGate), and for the first capture running every swapped
// block is copied back and every move in flight waited for, since none can be while it runs.
void before_stream_capture();
// A capture ended, or failed to begin.
void after_stream_capture();
// Before the driver resets a device's primary context (cudaDeviceReset) or destroys a context:
// deepum's streams and events there die, and the memory allocated there is freed. The engine
// stops for good (its contents are lost with the memory), the ranges are forgotten, and the
// layouts of the context's functions too.
void before_context_reset(int device);
void before_context_destroy(std::uint64_t context);
// What the allocation side forgets when a device's context is destroyed by a path no interposer
// sees (CUPTI's context-destroy callback: cudaDeviceReset may reach the driver that way): set by
// the preload library at load. Runs inside the driver's call: takes locks, calls no driver.
using MemoryResetHook = void (*)(int device);
void set_memory_reset_hook(MemoryResetHook hook);

// In the child after fork(): the parent's tracer and worker are not the child's.
void abandon_tracing_after_fork();

}  // namespace deepum::cuda
