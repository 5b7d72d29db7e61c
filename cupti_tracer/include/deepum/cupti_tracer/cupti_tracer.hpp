// CuptiTracer: watches kernel launches (CUPTI driver-API callbacks) and what the GPU did (CUPTI
// activity records: kernel, memcpy and memset executions, GPU page faults, unified-memory
// migrations) and hands them to an EventSink as the plain events of core/events.hpp.
//
// When to start: after the CUDA driver is initialised (cuInit has run) and BEFORE the first
// managed allocation: CUPTI only reports unified-memory counters for memory allocated after
// cuptiActivityConfigureUnifiedMemoryCounter. The session calls start() right before its first
// cuMemAllocManaged. Launch callbacks cover launches made after start().
//
// One tracer per process: CUPTI is process-wide and accepts one subscriber. When another one holds
// it (torch.profiler/kineto, Nsight Systems, Nsight Compute, cuda-gdb, compute-sanitizer), or
// libcupti cannot be found, start() says so and does nothing: the program runs on untraced.
// Conversely, while deepum holds the subscriber those tools cannot attach.
//
// Launch paths covered (driver API, so runtime launches are seen through the driver calls cudart
// makes): cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel, and their _ptsz variants;
// cuGraphLaunch(_ptsz), recorded as one KernelLaunch whose `function` is the CUgraphExec handle,
// with zero grid and block and no pointers (the kernels inside a graph are not scanned); its
// name is reported as "<cuda-graph>". Not covered: cuLaunchCooperativeKernelMultiDevice
// (deprecated), the legacy cuLaunch/cuLaunchGrid, and device-side launches.
//
// Launches are recorded at API entry, before the driver validates them: a launch that fails still
// appears, and has no KernelExecution.
#pragma once

#include <cuda.h>
#include <cupti.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deepum/core/latency_histogram.hpp"
#include "deepum/cupti_tracer/activity_decoder.hpp"
#include "deepum/cupti_tracer/buffer_pool.hpp"
#include "deepum/cupti_tracer/cupti_library.hpp"
#include "deepum/cupti_tracer/event_sink.hpp"
#include "deepum/cupti_tracer/function_layouts.hpp"
#include "deepum/cupti_tracer/launch_scanner.hpp"

namespace deepum::cupti_tracer {

enum class TracingLevel : std::uint8_t {
  none,      // nothing: start() returns `disabled`
  launches,  // launch callbacks only (no activity records)
  activity,  // activity records only (kernel executions, faults, migrations)
  full,      // both
};

struct TracerOptions {
  TracingLevel level = TracingLevel::full;

  // -- What the tracer needs from the session --
  DlsymFn dlsym = nullptr;                 // glibc's dlsym: preload::real_dlsym()
  DriverApi driver;                        // filled with preload::find_driver_function
  const ManagedLookup* managed = nullptr;  // null: launches carry no pointers. Must outlive the tracer.
  // Each function's parameter layout (learned when the program got its handle). null: no launch
  // is scanned through kernelParams. Must outlive the tracer.
  FunctionLayouts* layouts = nullptr;
  std::string cupti_path;  // a libcupti file or folder; empty: the default search
  // Also the driver's copy and memset entry points (copy_call.hpp) -> EventSink::on_copy, for
  // evictions ordered before them. Off unless asked: each such call then pays a callback.
  bool copy_callbacks = false;
  // True on a thread while it makes the session's own driver calls (its copies, its copy kernel):
  // those are not the program's, and their launch and copy callbacks are skipped. null: none.
  bool (*own_calls)() = nullptr;

  // -- Activity --
  // CONCURRENT_KERNEL -> KernelExecution, and with it MEMCPY and MEMSET -> KernelExecution of
  // operation memcpy / memset. StartStatus::kernel_records follows the kernels alone; a copy kind
  // CUPTI refuses makes the outcome `partial` and is named in `detail`.
  bool kernel_records = true;
  bool um_counters = true;  // GPU_PAGE_FAULT, BYTES_TRANSFER_HTOD/DTOH -> PageFault, Migration
  // With um_counters: also THRASHING, THROTTLING, REMOTE_MAP -> DriverAction. They matter only when
  // memory is oversubscribed, and cost launch-bound programs a few percent when asked for.
  bool thrashing_counters = true;
  // Devices the unified-memory counters are configured for (one config per counter kind and device).
  std::vector<std::uint32_t> um_counter_devices{0};
  bool um_counter_all_devices = false;  // every device cuDeviceGetCount reports (overrides the list)
  // CUPTI keeps kernel timestamps in device memory by default (a few MB per context); true moves
  // them to pinned host memory, leaving the GPU memory to the program.
  bool cupti_buffers_in_host_memory = false;
  // One activity buffer per producing thread (CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER). A
  // default flush returns only buffers whose records are all complete, so records of kernels still
  // queued could hold back fault records in a shared buffer. Measured (H100, GPT-2 and ResNet-50):
  // fault records were 0.1-1 s late either way; the driver's own queue seems to hold them.
  bool per_thread_buffers = true;

  // -- Delivery --
  std::size_t buffer_bytes = std::size_t{8} << 20;  // per activity buffer
  std::size_t max_buffers = 32;                     // past that CUPTI drops records (counted)
  // cuptiActivityFlushPeriod: CUPTI's worker thread hands back FULL buffers this often. 0: CUPTI's
  // own heuristics.
  std::uint32_t cupti_flush_period_ms = 5;
  // The tracer's poll thread calls cuptiActivityFlushAll(0) this often, which also hands back
  // partly filled buffers whose records are complete: records arrive within about this delay.
  // 0: no thread; the session calls poll() itself.
  std::uint32_t poll_period_ms = 5;
  // Stop the tracer (poll thread joined, final forced flush) from an atexit handler registered at
  // the end of start(), so it runs before libcupti's own teardown.
  bool stop_at_exit = true;
};

struct StartStatus {
  enum class Outcome : std::uint8_t {
    started,           // everything asked for runs
    partial,           // some of it runs; `detail` says what does not
    disabled,          // level none
    library_missing,   // no usable libcupti
    other_subscriber,  // another CUPTI client holds the process (profiler, Nsight, debugger)
    failed,            // CUPTI refused everything
    already_started,   // this or another CuptiTracer is running
  };
  Outcome outcome = Outcome::disabled;
  bool launch_callbacks = false;  // every launch callback is enabled
  bool copy_callbacks = false;    // every copy and memset callback is enabled (copy_callbacks asked)
  bool kernel_records = false;
  bool um_counters = false;
  std::string cupti_path;  // the libcupti in use
  // One sentence per thing that could not be done, and why; empty when nothing failed.
  std::string detail;

  bool running() const { return launch_callbacks || kernel_records || um_counters; }
};
const char* to_string(StartStatus::Outcome outcome);

// The driver launch APIs the tracer watches, in TracerStats::launches_by_api order.
inline constexpr std::size_t kLaunchApiCount = 8;
// "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz",
// "cuLaunchCooperativeKernel", "cuLaunchCooperativeKernel_ptsz", "cuGraphLaunch", "cuGraphLaunch_ptsz".
const char* launch_api_name(std::size_t index);

// A snapshot of the tracer's counters.
struct TracerStats {
  // Launch callbacks
  std::uint64_t launches = 0;  // kernel launches seen (graph launches excluded)
  std::uint64_t graph_launches = 0;
  std::array<std::uint64_t, kLaunchApiCount> launches_by_api{};  // kernel and graph launches
  std::uint64_t launches_with_managed_pointers = 0;
  std::uint64_t launches_pointers_truncated = 0;  // more than KernelLaunch::kMaxPointers
  std::uint64_t launches_packed_buffer = 0;       // arguments given through `extra`
  std::uint64_t launches_without_layout = 0;      // kernelParams given, layout unknown: not scanned
  std::uint64_t managed_lookups = 0;              // ManagedLookup::contains calls
  FunctionLayoutStats layouts;                    // what FunctionLayouts learned
  std::uint64_t callback_exceptions = 0;          // caught at the CUPTI boundary
  // The program's threads inside the launch and the copy callbacks, each one timed.
  core::LatencySummary launch_callback, copy_callback;
  std::uint64_t copies = 0;  // copy and memset calls seen (copy_callbacks)
  std::uint64_t copies_with_managed_operands = 0;
  std::uint64_t pointer_tables = 0;  // of them, copies of host memory holding managed pointers
  // Activity
  DecoderCounts records;            // by RecordClass
  std::uint64_t record_errors = 0;  // cuptiActivityGetNextRecord failed mid-buffer
  std::uint64_t dropped_records = 0;
  std::uint64_t buffers_requested = 0;
  std::uint64_t buffers_completed = 0;
  std::uint64_t buffers_allocated = 0;
  std::uint64_t buffers_refused = 0;  // pool exhausted: CUPTI dropped records
  std::uint64_t polls = 0;
  std::uint64_t polls_skipped_capturing = 0;  // a stream capture ran: no flush (see core::CaptureGate)
  std::uint64_t kernel_records_filtered = 0;  // kernel executions dropped while records were paused
};

class CuptiTracer {
 public:
  CuptiTracer();
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;
  ~CuptiTracer();  // stop()

  // Loads libcupti, subscribes, enables what `options` asks for. Call once, from one thread, after
  // cuInit and before the first managed allocation. Errors (CUPTI's, allocation) come back in the
  // status, never as exceptions; a failure leaves the process untraced (with libcupti loaded).
  StartStatus start(const TracerOptions& options, EventSink& sink);
  // Hands back every buffer, including records not yet complete (cuptiActivityFlushAll with
  // CUPTI_ACTIVITY_FLAG_FLUSH_FORCED). For exit, after synchronising the device.
  void flush() noexcept;
  // Hands back buffers whose records are complete (cuptiActivityFlushAll(0)); what the poll thread
  // does. Cheap when nothing is pending.
  void poll() noexcept;
  // Launch callbacks off, poll thread joined, forced flush, activity kinds off, unsubscribed.
  // Idempotent. Records still inside CUPTI after this are dropped.
  void stop() noexcept;
  // Kernel execution records only matter while faults need attributing, so the session pauses
  // them when no faults come and resumes them when faults return. A filter here: CUPTI keeps
  // recording them, since enabling or disabling an activity kind while launches run deadlocked
  // against the program's threads (CUPTI is configured at start and at exit only).
  void set_kernel_records_paused(bool paused) noexcept;
  bool kernel_records_paused() const noexcept {
    return kernel_records_paused_.load(std::memory_order_relaxed);
  }
  // In the child after fork(): CUPTI and the poll thread are the parent's; forget them without
  // calling anything. The tracer is inert afterwards.
  void abandon_after_fork() noexcept;

  bool running() const noexcept { return running_.load(std::memory_order_acquire); }
  TracerStats stats() const noexcept;
  const CuptiLibrary& library() const noexcept { return *library_; }

 private:
  struct Counters;
  // The CUPTI entry points: nothing escapes them.
  static void CUPTIAPI on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                   const void* cbdata) noexcept;
  static void CUPTIAPI on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept;
  static void CUPTIAPI on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer,
                                           size_t size, size_t valid_size) noexcept;
  static void stop_at_exit() noexcept;
  void abandon_start() noexcept;  // undo a start() that got nowhere

  void handle_launch(CUpti_CallbackId cbid, const CUpti_CallbackData& data);
  void handle_copy(CUpti_CallbackId cbid, const CUpti_CallbackData& data);
  void drain(uint8_t* buffer, size_t valid_size, CUcontext context, uint32_t stream_id) noexcept;
  StartStatus enable_activity(StartStatus status);
  void poll_loop();

  TracerOptions options_;
  EventSink* sink_ = nullptr;
  std::unique_ptr<CuptiLibrary> library_;
  std::unique_ptr<BufferPool> pool_;
  std::unique_ptr<Counters> counters_;
  ActivityDecoder decoder_;
  CUpti_SubscriberHandle subscriber_ = nullptr;
  std::atomic<bool> running_{false};
  std::atomic<bool> callbacks_on_{false};
  std::atomic<bool> kernel_records_on_{false};
  std::atomic<bool> kernel_records_paused_{false};
  bool activity_registered_ = false;
  std::vector<CUpti_ActivityKind> enabled_kinds_;
  std::mutex stop_mutex_;

  std::unique_ptr<std::thread> poll_thread_;
  std::mutex poll_mutex_;
  std::condition_variable poll_wake_;
  bool poll_stop_ = false;
};

}  // namespace deepum::cupti_tracer
