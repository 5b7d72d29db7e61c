// EventSink: where the CUPTI tracer delivers the plain events of core/events.hpp. The tracer knows
// nothing about what happens to them; the session's implementation decides (per-thread rings, a
// trace file, a test's vector).
#pragma once

#include <cstdint>

#include "deepum/core/events.hpp"

namespace deepum::cupti_tracer {

// Threads and rules:
// - on_launch, on_copy and on_function_name run ON THE APPLICATION THREAD, inside CUPTI's launch callback,
//   before the launch reaches the driver. They must be fast, must not allocate in steady state and
//   must not call CUDA. on_function_name comes first, once per function (again after a module
//   unload, when the handle may name another function); `name` is only valid during the call.
// - on_execution, on_fault, on_migration and on_driver_action run on whichever thread CUPTI hands back an
// activity
//   buffer: CUPTI's worker thread, the tracer's poll thread, or a thread calling flush(). Several of
//   them can run at once.
// - Exceptions are caught by the tracer and counted, never passed into CUPTI; still, don't throw.
// - The sink must outlive the tracer (in practice both live until the process ends).
class EventSink {
 public:
  virtual ~EventSink() = default;

  // `every`: all of its pointers, where the launch holds more than it keeps (nullptr otherwise);
  // valid during the call only.
  virtual void on_launch(const core::KernelLaunch& launch, const core::LaunchPointers* every) = 0;
  // A copy or memset at its API entry (TracerOptions::copy_callbacks), on the application thread
  // under on_launch's rules; only a sink that orders work before copies needs to override this.
  // `table`: the managed pointers a small copy from host memory carries (a pointer table a
  // kernel will follow; see pointers_in_host_source), or nullptr.
  virtual void on_copy(const core::CopyLaunch&, const core::LaunchPointers* /*table*/) {}
  // The driver call whose entry on_launch or on_copy saw has returned on this thread: the driver
  // has enqueued the operation (or refused it). Under on_launch's rules.
  virtual void on_enqueued() {}
  virtual void on_execution(const core::KernelExecution& execution) = 0;
  virtual void on_fault(const core::PageFault& fault) = 0;
  virtual void on_migration(const core::Migration& migration) = 0;
  // The driver's thrashing counters; only a sink that reports them needs to override this.
  virtual void on_driver_action(const core::DriverAction&) {}
  // `function` is KernelLaunch::function: a CUfunction (or CUkernel) handle, or a CUgraphExec for
  // graph launches (name "<cuda-graph>").
  virtual void on_function_name(std::uint64_t function, const char* name) = 0;
  // A context is about to be destroyed (cudaDeviceReset, cuCtxDestroy), on the destroying thread
  // inside the driver's call: only flags may be set and locks taken that no driver call is made
  // under; nothing may wait for another thread.
  virtual void on_context_destroying(std::uint64_t /*context*/) {}
};

}  // namespace deepum::cupti_tracer
