#include "deepum/cuda/tracing_session.hpp"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstddef>
#include <mutex>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "deepum/config/validate.hpp"
#include "deepum/core/capture_gate.hpp"
#include "deepum/core/indirect_kernels.hpp"
#include "deepum/core/live_buffers.hpp"
#include "deepum/core/stream_id.hpp"
#include "deepum/core/trace_recorder.hpp"
#include "deepum/cuda/device_engines.hpp"
#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/program_value_waits.hpp"
#include "deepum/cuda/real_symbols.hpp"
#include "deepum/cuda/runtime_counters.hpp"
#include "deepum/cuda/stream_ordered_evictor.hpp"
#include "deepum/cupti_tracer/cupti_tracer.hpp"
#include "deepum/pytorch_allocator/trace_tracker.hpp"

namespace deepum::cuda {
namespace {

using core::EventPipeline;

// "Is this word a managed pointer?", answered from the registry for the launch scanner, and how far
// its buffer reaches, from the program's allocator (when LiveBuffers are kept).
class RegistryLookup final : public cupti_tracer::ManagedLookup {
 public:
  RegistryLookup(const core::ManagedRegistry& registry, const core::LiveBuffers* buffers)
      : registry_(registry), buffers_(buffers) {}
  bool contains(std::uint64_t address) const noexcept override { return registry_.contains(address); }
  cupti_tracer::AddressBounds bounds() const noexcept override {
    const auto [low, high] = registry_.address_span();
    return low < high ? cupti_tracer::AddressBounds{low, high} : cupti_tracer::AddressBounds{1, 0};
  }
  std::uint64_t buffer_bytes(std::uint64_t address) const noexcept override {
    return buffers_ != nullptr ? buffers_->bytes_from(address) : 0;
  }

 private:
  const core::ManagedRegistry& registry_;
  const core::LiveBuffers* buffers_;
};

core::Timestamp now_ns();  // below, with the runtime it reads

// The tracer's events go straight into the pipeline's queues; launches and copies get the engine's
// moves ordered before them. While a trace file is recorded, every launch's operands and every copy
// go to it too, for the simulator's replay of those moves.
class PipelineSink final : public cupti_tracer::EventSink {
 public:
  PipelineSink(EventPipeline& pipeline, DeviceEngines& engines, bool records_trace_file)
      : pipeline_(pipeline), engines_(engines), records_trace_file_(records_trace_file) {}
  void on_launch(const core::KernelLaunch& launch, const core::LaunchPointers* every) override {
    // An NCCL kernel launched inside an interposed NCCL call reaches the buffers named before the
    // call (before_collective), and nothing is ordered before it here. Outside one, what it reaches
    // is unknown: the thread that launches it first stops placing (another thread that launches
    // meanwhile waits for the copies back, or does them).
    const bool nccl = is_nccl_kernel(launch.function);  // a scan of NCCL's kernels, once per launch
    const bool named_before = nccl && core::CollectiveCallScope::active();
    if (nccl && !named_before) stop_placing_under_nccl("NCCL kernels reach buffers deepum cannot see");
    StreamOrderedEvictor* own = named_before ? nullptr : engines_.of_context(launch.context);
    StreamOrderedEvictor::Moves moves;
    if (own != nullptr) moves = own->before_launch(launch, every);
    // Queued once decided (whether its GPU wait was behind deepum's moves), before anything else of
    // it: the worker takes a launch before its operands and hints.
    core::KernelLaunch queued = launch;
    queued.behind_moves = moves.behind_moves;
    pipeline_.on_launch(queued);
    if (records_trace_file_) post_operands(launch, every);
    if (named_before) return;
    report(moves, launch.host_time);
    // A context with no engine of its own (another device's, or one that never allocated) gets
    // every engine's memory made safe to reach from it.
    if (own == nullptr || engines_.engines() > 1) {
      const bool whole = every != nullptr && every->count > launch.pointer_count;
      const std::size_t kept = std::min<std::size_t>(launch.pointer_count, core::KernelLaunch::kMaxPointers);
      named_by_other_device(
          own, whole ? every->pointers : launch.pointers.data(),
          whole ? every->extents : launch.extents.data(), whole ? every->count : kept, 0,
          launch.unnamed_memory || (launch.pointers_truncated && !(whole && every->complete)));
    }
  }
  void on_copy(const core::CopyLaunch& copy, const core::LaunchPointers* table) override {
    // deepum's own copies (swaps) never get here (TracerOptions::own_calls): the replay decides them.
    if (records_trace_file_) pipeline_.on_copy_launch(copy);
    StreamOrderedEvictor* own = engines_.of_context(copy.context);
    // Counted before any engine decides for it: none moves while it may wait.
    if (copy.waits_for_value) program_value_wait_entered(copy.context, copy.stream);
    if (copy.unnamed_memory) {
      // Its operands, on whichever device, are unknown: no block stays fresh or swapped. In its own
      // device's engine it counts as an operation of its stream that may reach memory it does not
      // name: a later swap there follows it, and none is decided while it is not enqueued.
      engines_.for_each([](StreamOrderedEvictor& engine, int, std::uint64_t) { engine.forget_fresh(); });
      if (own != nullptr) report(own->before_copy(copy, nullptr), copy.host_time);
      return;
    }
    if (own != nullptr) report(own->before_copy(copy, table), copy.host_time);
    if (own == nullptr || engines_.engines() > 1) {
      named_by_other_device(own, copy.operands.data(), nullptr, copy.operand_count, copy.bytes, false);
      if (table != nullptr)
        named_by_other_device(own, table->pointers, table->extents, table->count, 0, !table->complete);
    }
  }
  void on_enqueued() override {
    engines_.for_each([](StreamOrderedEvictor& engine, int, std::uint64_t) { engine.operation_enqueued(); });
    program_value_wait_enqueued();
  }
  void on_execution(const core::KernelExecution& execution) override { pipeline_.on_execution(execution); }
  void on_fault(const core::PageFault& fault) override { pipeline_.on_fault(fault); }
  void on_migration(const core::Migration& migration) override { pipeline_.on_migration(migration); }
  void on_driver_action(const core::DriverAction& action) override { pipeline_.on_driver_action(action); }
  void on_function_name(std::uint64_t function, const char* name) override {
    pipeline_.on_function_name(function, name);
    // Acted on at its launches, the first of which follows at once (no CUDA here).
    if (engines_.first() != nullptr && core::reaches_buffers_indirectly(name)) remember_indirect(function);
  }
  void on_context_destroying(std::uint64_t context) override;

  // An interposed NCCL call is about to hand NCCL `call`'s buffers on `stream`: they are named
  // there, as a launch's are, before the call enqueues its kernels (what they need is fetched, the
  // room made); swaps and placement go on. A call whose extent is not known stops them (every
  // swapped block copied back first): NCCL's kernels would reach buffers not named.
  void before_collective(const core::CollectiveBuffers& call, std::uint64_t stream, std::uint64_t context) {
    StreamOrderedEvictor* own = engines_.of_context(context);
    if (own == nullptr) return;
    if (!call.known) {
      stop_placing_under_nccl("an NCCL call of unknown extent");
      return;
    }
    core::KernelLaunch launch;
    launch.function = kCollectiveFunction;
    launch.stream = core::stream_id(stream);
    launch.context = context;
    launch.host_time = now_ns();
    for (std::size_t i = 0; i < call.count; ++i) {
      launch.pointers[i] = call.buffers[i].address;
      launch.extents[i] = call.buffers[i].bytes;
    }
    launch.pointer_count = static_cast<std::uint16_t>(call.count);
    report(own->before_launch(launch), launch.host_time);
  }
  // Swaps and placement stopped: an NCCL kernel reached buffers deepum could not name.
  bool placing_stopped() const { return placing_stopped_.load(std::memory_order_acquire); }

 private:
  // Every pointer the launch names with its extent: `every` where the launch holds more than it
  // keeps, else its own. Allocates on the program's thread, hence only for a trace file; out of
  // memory loses this record alone, never the moves ordered before the launch.
  void post_operands(const core::KernelLaunch& launch, const core::LaunchPointers* every) noexcept {
    try {
      core::LaunchOperands operands;
      operands.correlation_id = launch.correlation_id;
      operands.unnamed_memory = launch.unnamed_memory;
      if (every != nullptr) {
        operands.complete = every->complete;
        operands.pointers.assign(every->pointers, every->pointers + every->count);
        operands.extents.assign(every->extents, every->extents + every->count);
      } else {
        const auto kept = static_cast<std::ptrdiff_t>(
            std::min<std::size_t>(launch.pointer_count, core::KernelLaunch::kMaxPointers));
        operands.complete = !launch.pointers_truncated;
        operands.pointers.assign(launch.pointers.begin(), launch.pointers.begin() + kept);
        operands.extents.assign(launch.extents.begin(), launch.extents.begin() + kept);
      }
      pipeline_.on_launch_operands(std::move(operands));
    } catch (const std::exception&) {
      // Out of memory: the trace lacks this launch's operands; the simulator sees no record of them.
    }
  }

  // The live estimate follows the moves ordered before a launch as they are decided.
  void report(const StreamOrderedEvictor::Moves& moves, core::Timestamp time) {
    for (const core::AddressRange& range : moves.evicted)
      pipeline_.on_hint({core::Hint::Kind::evict_to_host, time, range.address, range.bytes});
    for (const core::AddressRange& range : moves.discarded)
      pipeline_.on_hint({core::Hint::Kind::discard, time, range.address, range.bytes});
    for (const core::AddressRange& range : moves.prefetched)
      pipeline_.on_hint({core::Hint::Kind::prefetch_to_gpu, time, range.address, range.bytes});
  }

  // Swapped blocks are copied back, and nothing is swapped or placed from now on, said once with
  // `why`.
  void stop_placing_under_nccl(const char* why) {
    if (placing_stopped_.load(std::memory_order_acquire)) return;
    // Each returns once every block it swapped is copied back.
    engines_.for_each([](StreamOrderedEvictor& engine, int, std::uint64_t) { engine.stop_placing(); });
    if (!placing_stopped_.exchange(true, std::memory_order_acq_rel))
      core::logger().warn(
          "{}: swaps and placement of fresh blocks are off from here on (evictions and prefetches go on)",
          why);
  }

  // An operation whose engine is `own` (nullptr: its context has none) named `pointers`, each
  // reaching `extents` bytes (nullptr: `bytes` each), or with `unnamed` may reach memory it does not
  // name: every other device's engine makes its memory safe to reach from there first.
  void named_by_other_device(const StreamOrderedEvictor* own, const std::uint64_t* pointers,
                             const std::uint64_t* extents, std::size_t count, std::uint64_t bytes,
                             bool unnamed) {
    std::array<std::uint64_t, core::CopyLaunch::kMaxOperands> each{};
    if (extents == nullptr) {
      count = std::min(count, each.size());
      each.fill(bytes);
      extents = each.data();
    }
    engines_.for_each([&](StreamOrderedEvictor& engine, int device, std::uint64_t) {
      if (&engine == own) return;
      if (unnamed) {
        if (engine.stop_placing_for_other_device())
          log_named_elsewhere(device, "an operation of another device may reach it unnamed");
      } else {
        engine.before_other_device_use(pointers, extents, count);
      }
    });
  }
  void log_named_elsewhere(int device, const char* why) {
    core::logger().warn(
        "device {}'s memory is used from another device ({}): swaps and placement of fresh blocks on "
        "device {} are off from here on",
        device, why, device);
  }

  // The functions whose name says they reach buffers indirectly, kept without a lock (they are
  // checked at every launch): NCCL has a few dozen kernels. Past kIndirectFunctions, every launch
  // counts as one of them.
  static constexpr std::size_t kIndirectFunctions = 256;
  void remember_indirect(std::uint64_t function) {
    const std::size_t slot = indirect_count_.fetch_add(1, std::memory_order_acq_rel);
    if (slot < kIndirectFunctions) indirect_functions_[slot].store(function, std::memory_order_release);
  }
  bool is_nccl_kernel(std::uint64_t function) const {
    const std::size_t count = indirect_count_.load(std::memory_order_acquire);
    if (count > kIndirectFunctions) return true;
    for (std::size_t i = 0; i < count; ++i) {
      // A slot taken but not yet written reads 0: its function's first launch is under way, in
      // the thread that took the slot.
      if (indirect_functions_[i].load(std::memory_order_acquire) == function) return true;
    }
    return false;
  }
  // The function id an interposed NCCL call's named buffers go to the model under (no CUfunction
  // handle is this: handles are addresses).
  static constexpr std::uint64_t kCollectiveFunction = 1;

  EventPipeline& pipeline_;
  DeviceEngines& engines_;
  const bool records_trace_file_;
  std::array<std::atomic<std::uint64_t>, kIndirectFunctions> indirect_functions_{};
  std::atomic<std::size_t> indirect_count_{0};
  std::atomic<bool> placing_stopped_{false};
};

struct Runtime {
  core::Session* session = nullptr;
  std::uint64_t context = 0;  // where deepum's streams and events live (current at start)
  int device = -1;            // ... and its device
  // That context was reset or destroyed: the worker no longer touches the driver through it.
  std::atomic<bool> context_gone{false};
  EventPipeline* pipeline = nullptr;
  std::unique_ptr<RegistryLookup> lookup;
  std::unique_ptr<core::LiveBuffers> live_buffers;  // PyTorch's blocks in use (see start_once)
  // mode's moves, ordered before launches: an engine per device, the first device's first.
  DeviceEngines engines;
  bool engines_allowed = false;  // the mode moves memory before launches (start_once decides)
  bool placing_allowed = true;   // CUPTI gave the launch and copy callbacks placing needs
  StreamOrderedEvictor* evictor() const { return engines.first(); }
  bool tracker_settled = false;  // worker only: attached, or never will be
  int tracker_attempts = 0;      // worker only
  std::unique_ptr<PipelineSink> sink;
  std::unique_ptr<cupti_tracer::CuptiTracer> tracer;
  std::unique_ptr<core::TraceRecorder> recorder;  // when trace_file is set
  std::thread worker;
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::atomic<bool> stopped{false};
  std::chrono::microseconds interval{1000};
  core::Timestamp paused_at = 0;  // worker only
  // How often and how long kernel records were paused (worker; read at exit after the join).
  std::uint64_t pauses = 0;
  core::Timestamp paused_ns = 0;
};

// Leaked on purpose, like the session: exit handlers and late hooks may still reach it.
std::atomic<Runtime*> g_runtime{nullptr};
std::once_flag g_start_once;

// CUPTI's clock, which stamps every activity record; the system clock before CUPTI is loaded.
core::Timestamp now_ns() {
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime != nullptr && runtime->tracer && runtime->tracer->library().loaded()) {
    std::uint64_t t = 0;
    if (auto fn = runtime->tracer->library().api().get_timestamp; fn && fn(&t) == CUPTI_SUCCESS) return t;
  }
  return static_cast<core::Timestamp>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                          std::chrono::system_clock::now().time_since_epoch())
                                          .count());
}

// The driver functions the tracer and the layouts call, straight from libcuda.
cupti_tracer::DriverApi driver_api() {
  cupti_tracer::DriverApi api;
  const auto take = [](auto& slot, const char* name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(find_driver_function(name));
  };
  take(api.func_get_param_info, "cuFuncGetParamInfo");
  take(api.kernel_get_param_info, "cuKernelGetParamInfo");
  take(api.func_get_name, "cuFuncGetName");
  take(api.kernel_get_name, "cuKernelGetName");
  take(api.device_get_count, "cuDeviceGetCount");
  return api;
}

// Every kernel's parameter layout: learned from the first getter call on, before tracing starts
// (a program may get its functions before its first allocation). Leaked, like the session.
cupti_tracer::FunctionLayouts& function_layouts() {
  static auto* layouts = new cupti_tracer::FunctionLayouts(driver_api());
  return *layouts;
}

// Kernel records are paused after this long without a fault (nothing to attribute) while the
// resident limit is not enforced, and resumed at the next fault.
constexpr core::Timestamp kQuietBeforePauseNs = 1'000'000'000;

// Worker: the evictions and prefetches ordered before launches that finished, into the records in
// time order (CUPTI loses many of the driver's records of them).
void report_finished_moves(Runtime& runtime, core::Timestamp now) {
  // Other devices' engines reap theirs too; the records-driven check holds the first device only.
  runtime.engines.for_each([&](StreamOrderedEvictor& engine, int, std::uint64_t) {
    if (&engine != runtime.evictor()) engine.poll_finished(now);
  });
  for (const StreamOrderedEvictor::Finished& move : runtime.evictor()->poll_finished(now)) {
    if (move.to_gpu) {
      runtime.pipeline->on_prefetch_done(move.range, move.start, move.end);
    } else {
      runtime.pipeline->on_eviction_done(move.range, move.end);
    }
  }
}

void pause_or_resume_kernel_records(Runtime& runtime, core::Timestamp now) {
  if (!runtime.tracer || runtime.pipeline->enforces_resident_limit()) return;
  const bool paused = runtime.tracer->kernel_records_paused();
  const core::Timestamp last_fault = runtime.pipeline->last_fault_handled();
  if (!paused && last_fault != 0 && now > last_fault + kQuietBeforePauseNs) {
    runtime.tracer->set_kernel_records_paused(true);
    runtime.pipeline->set_kernel_records_paused(runtime.tracer->kernel_records_paused());
    runtime.paused_at = now;
    if (runtime.tracer->kernel_records_paused()) ++runtime.pauses;
  } else if (paused && last_fault > runtime.paused_at) {
    runtime.tracer->set_kernel_records_paused(false);
    runtime.pipeline->set_kernel_records_paused(runtime.tracer->kernel_records_paused());
    runtime.paused_ns += now - runtime.paused_at;
  }
}

// "a", "a and b", "a, b and c".
std::string join_as_list(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

// PyTorch loads libc10_cuda.so as a dependency of an RTLD_LOCAL extension: not in the global scope.
void* lookup_in_pytorch(const char* name) {
  if (void* symbol = real_dlsym()(RTLD_DEFAULT, name)) return symbol;
  return find_loaded_symbol("libc10_cuda.so", name);
}

// PyTorch's allocator tracker, attached from the worker (which holds no allocator lock) once the
// allocator exists; until then, tried again every few steps. It gives the engine the size of every
// tensor a kernel names and the buffers handed out and taken back, and the trace file its buffer
// events.
void attach_block_tracker(Runtime& runtime) {
  if (!runtime.live_buffers && !runtime.recorder) return;
  if (runtime.tracker_settled || runtime.tracker_attempts++ % 200 != 0) return;
  Runtime* rt = &runtime;
  const pytorch_allocator::AttachResult result = pytorch_allocator::attach_block_tracker(
      [rt](const pytorch_allocator::BlockEvent& event) {
        // The tracker stays in PyTorch's allocator for good: after exit (or in a forked child) it
        // must do nothing, the driver may be gone.
        if (rt->stopped.load(std::memory_order_acquire)) return;
        // Inside PyTorch's allocator, with its lock held: nothing may escape into it.
        try {
          const bool handed_out = event.kind == pytorch_allocator::BlockEvent::Kind::handed_out;
          // On the thread that frees: its per-thread stream, where that is the one.
          const std::uint64_t stream = core::stream_id(reinterpret_cast<std::uintptr_t>(event.stream));
          if (rt->recorder) {
            rt->pipeline->on_buffer_event(
                {handed_out ? core::BufferEvent::Kind::handed_out : core::BufferEvent::Kind::returned,
                 now_ns(), event.address, event.bytes, handed_out ? std::uint64_t{0} : stream});
          }
          if (rt->live_buffers) {
            if (handed_out) {
              rt->live_buffers->handed_out(event.address, event.bytes);
            } else {
              rt->live_buffers->returned(event.address);
            }
          }
          // Each engine acts on its own device's buffers only.
          rt->engines.for_each([&](StreamOrderedEvictor& engine, int, std::uint64_t) {
            if (handed_out) {
              engine.on_buffer_handed_out(event.address, event.bytes);
            } else {
              engine.on_buffer_returned(event.address, event.bytes, stream);
            }
          });
        } catch (const std::exception&) {
          // Out of memory for a map node: this block's size is lost, nothing else.
        }
      },
      lookup_in_pytorch);
  using Outcome = pytorch_allocator::AttachResult::Outcome;
  // What following the allocator is for here, and what is lost without it.
  std::vector<std::string_view> used_for, lost;
  if (runtime.live_buffers) {
    used_for.push_back("tensor sizes of launches");
    lost.push_back("tensor sizes are guessed from pointers alone");
  }
  if (runtime.recorder) {
    used_for.push_back("the trace file's buffer events");
    lost.push_back("the trace file has no buffer events");
  }
  const std::string uses = join_as_list(used_for);
  const std::string fallback = join_as_list(lost);
  switch (result.outcome) {
    case Outcome::attached:
      core::logger().info("following PyTorch's allocator ({}): {}", result.detail, uses);
      runtime.tracker_settled = true;
      break;
    case Outcome::not_pytorch:
      core::logger().debug("no PyTorch CUDA allocator in this process: {}", fallback);
      runtime.tracker_settled = true;
      break;
    case Outcome::unsupported:
      core::logger().warn("cannot follow PyTorch's allocator ({}): {}", result.detail, fallback);
      runtime.tracker_settled = true;
      break;
    case Outcome::not_ready:
      break;
  }
}

// One round of the worker. Inside the capture gate: while a stream capture runs, its queries and
// moves would invalidate it, so the round is skipped and the records wait.
void worker_round(Runtime& runtime) {
  core::GateEntry entry;
  if (!entry) return;
  attach_block_tracker(runtime);
  const core::Timestamp now = now_ns();
  if (runtime.evictor()) report_finished_moves(runtime, now);
  runtime.engines.for_each(
      [](StreamOrderedEvictor& engine, int, std::uint64_t) { engine.grow_swap_store(); });
  const auto started = std::chrono::steady_clock::now();
  runtime.pipeline->step(now, runtime.recorder.get());
  runtime.pipeline->record_step_time(static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started)
          .count()));
  pause_or_resume_kernel_records(runtime, now);
}

void worker_loop(Runtime& runtime) {
  // The engine's context: reaping its moves and pinning its swap store need it current, as does the
  // driver's used-memory figure, read for the trace (never once that context is gone).
  const auto context = reinterpret_cast<CUcontext>(static_cast<std::uintptr_t>(runtime.context));
  const CUresult bound =
      context != nullptr ? driver::ctx_set_current.get()(context) : CUDA_ERROR_INVALID_CONTEXT;
  if (bound != CUDA_SUCCESS) {
    core::logger().warn(
        "worker thread: {}; the driver's used memory is not sampled",
        context != nullptr ? describe("cuCtxSetCurrent", bound) : std::string("no CUDA context"));
  } else {
    runtime.pipeline->measure_used_memory([&runtime]() -> std::optional<std::uint64_t> {
      if (runtime.context_gone.load(std::memory_order_acquire)) return std::nullopt;
      return device_used_bytes();
    });
  }
  std::unique_lock lock(runtime.mutex);
  while (!runtime.stopping) {
    runtime.wake.wait_for(lock, runtime.interval, [&] { return runtime.stopping; });
    if (runtime.stopping) break;
    lock.unlock();
    worker_round(runtime);
    lock.lock();
  }
}

// Before the CUDA runtime's own exit handlers (registered earlier, so run later): stop the worker,
// hand over CUPTI's last records, decide every pending fault.
void stop_tracing_at_exit() {
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime == nullptr || runtime->stopped.exchange(true)) return;
  {
    std::lock_guard lock(runtime->mutex);
    runtime->stopping = true;
  }
  runtime->wake.notify_all();
  if (runtime->worker.joinable()) runtime->worker.join();
  runtime->engines.for_each([](StreamOrderedEvictor& engine, int, std::uint64_t) { engine.stop(); });
  if (runtime->tracer) {
    runtime->tracer->flush();
    core::RuntimeCounters counters = collect_runtime_counters(runtime->tracer->stats(), runtime->evictor());
    if (runtime->engines.engines() > 1) {
      runtime->engines.for_each([&](StreamOrderedEvictor& engine, int device, std::uint64_t) {
        counters.device_engines.push_back(
            {device, runtime->session->allocations().resident_limit_bytes(device), engine_counters(engine)});
      });
    }
    counters.tracer.kernel_record_pauses = runtime->pauses;
    counters.tracer.kernel_records_paused_ns = runtime->paused_ns;
    if (runtime->tracer->kernel_records_paused())
      counters.tracer.kernel_records_paused_ns += now_ns() - runtime->paused_at;
    runtime->session->set_runtime_counters(std::move(counters));
  }
  if (runtime->evictor()) report_finished_moves(*runtime, now_ns());
  runtime->pipeline->step(now_ns(), runtime->recorder.get(), /*final=*/true);
  if (runtime->recorder) {
    const std::string error = runtime->recorder->finish();
    if (error.empty()) {
      core::logger().info("trace written: {} and {}", runtime->recorder->compact_path(),
                          runtime->recorder->perfetto_path());
    } else {
      core::logger().warn("trace files incomplete: {}", error);
    }
  }
}

// The trace files named by trace_file, with what a reader needs to know about the run.
std::unique_ptr<core::TraceRecorder> open_trace(const core::Session& session, int device) {
  const std::string& pattern = session.config().trace_file;
  if (pattern.empty()) return nullptr;
  auto recorder = std::make_unique<core::TraceRecorder>();
  core::TraceMetadata metadata;
  metadata.emplace(core::trace_metadata::kDeviceTotalMemory,
                   std::to_string(session.allocations().device_total_bytes(device)));
  metadata.emplace(core::trace_metadata::kCommandLine, core::process_command_line());
  metadata.emplace(core::trace_metadata::kDeepumVersion, "0.1.0");
  metadata.emplace(core::trace_metadata::kStartTime, std::to_string(now_ns()));
  metadata.emplace("resident_limit_bytes",
                   std::to_string(session.allocations().resident_limit_bytes(device)));
  metadata.emplace("alloc_limit_bytes", std::to_string(session.allocations().alloc_limit_bytes(device)));
  const std::string error =
      recorder->open(core::expand_process_id(pattern, static_cast<long>(getpid())), metadata);
  if (!error.empty()) {
    core::logger().warn("cannot write the trace ({}); tracing continues without a file", error);
    return nullptr;
  }
  return recorder;
}

std::thread start_worker(Runtime& runtime) {
  // The worker must never take the program's signals (SIGINT belongs to the training loop).
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::thread worker([&runtime] { worker_loop(runtime); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_setname_np(worker.native_handle(), "deepum-worker");
  return worker;
}

cupti_tracer::TracingLevel tracer_level(config::TracingLevel level) {
  switch (level) {
    case config::TracingLevel::off:
      return cupti_tracer::TracingLevel::none;
    case config::TracingLevel::launches:
      return cupti_tracer::TracingLevel::launches;
    case config::TracingLevel::kernels:
      return cupti_tracer::TracingLevel::full;
    case config::TracingLevel::full:
      return cupti_tracer::TracingLevel::full;
  }
  return cupti_tracer::TracingLevel::full;
}

// Pinned host memory the swap store may hold: swap_store_limit (a percentage of the GPU's memory,
// as for the limits), or automatic (0): what can be out of the GPU at once, the allocation limit
// less the resident limit; at most half of the host's memory either way (the kernel cannot page
// pinned memory out).
std::uint64_t swap_store_bytes(const config::Config& config, core::Session& session, int device) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const std::uint64_t host =
      pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  const std::uint64_t alloc = session.allocations().alloc_limit_bytes(device);
  const std::uint64_t resident = session.allocations().resident_limit_bytes(device);
  const std::uint64_t wanted =
      config.swap_store_limit == config::SizeSpec::of_bytes(0)
          ? (alloc > resident ? alloc - resident : 0)
          : config.swap_store_limit.resolve(session.allocations().device_total_bytes(device));
  return host != 0 ? std::min(wanted, host / 2) : wanted;
}

// The launch-ordered engine holding `device`'s resident limit (`options`' for it), in the current
// context; nullptr where it could not start (said why). `first`: the first device's, whose limit
// the records in time order check as well.
std::unique_ptr<StreamOrderedEvictor> make_engine(core::Session& session, int device,
                                                  const core::PipelineOptions& options, bool first = true) {
  const config::Config& config = session.config();
  // Batches of at most an eighth of the limit: the model runs between the limit less two
  // batches (one evicting alongside the program) and the limit.
  core::LaunchOrderedOptions moves;
  moves.prefetch = config.moves.prefetch;
  moves.discard_dead = config.moves.discard && driver::discard_and_prefetch.get() != nullptr;
  moves.place_fresh = config.moves.place_fresh && driver::discard_and_prefetch.get() != nullptr;
  moves.evictions_ahead = config.evictions_ahead;
  moves.victims_by_next_use = config.learn_loop;
  moves.restore_ahead = config.learn_loop;
  // Swapping drops copied-out blocks (cuMemDiscardBatchAsync) and places them back
  // (cuMemDiscardAndPrefetchBatchAsync); the evictor checks the copies when it starts.
  moves.swap = config.moves.swap && driver::discard_batch.get() != nullptr &&
               driver::discard_and_prefetch.get() != nullptr;
  if (moves.swap) moves.swap_bytes = swap_store_bytes(config, session, device);
  if (first && config.moves.swap && !moves.swap) {
    core::logger().warn(
        "swaps are off: the driver lacks cuMemDiscardBatchAsync or cuMemDiscardAndPrefetchBatchAsync");
  }
  if (first && (config.moves.discard || config.moves.place_fresh) &&
      driver::discard_and_prefetch.get() == nullptr) {
    core::logger().warn(
        "discards and placement of fresh blocks are off: the driver lacks "
        "cuMemDiscardAndPrefetchBatchAsync");
  }
  auto engine = std::make_unique<StreamOrderedEvictor>(
      options.resident_limit_bytes, options.launch_ordered_batch(), moves, config.moves.eviction_thread);
  if (const std::string error = engine->create(); !error.empty()) {
    core::logger().warn("no evictions before launches on device {} ({}): the driver evicts", device, error);
    return nullptr;
  }
  return engine;
}

void start_once(core::Session& session) {
  const config::Config& config = session.config();
  auto* runtime = new Runtime();
  runtime->session = &session;
  if (CUcontext context = current_context(); context != nullptr) {
    runtime->context = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(context));
    CUdevice device = 0;
    if (driver::ctx_get_device.get() != nullptr && driver::ctx_get_device.get()(&device) == CUDA_SUCCESS)
      runtime->device = static_cast<int>(device);
  }
  // The first engine holds the limits of the device current at the first allocation; another
  // device gets its own at its first allocation (note_range_allocated).
  const int device = std::max(runtime->device, 0);

  core::PipelineOptions options;
  options.resident_limit_bytes = session.allocations().resident_limit_bytes(device);
  options.eviction_headroom_bytes =
      config.eviction_headroom.resolve(session.allocations().resident_limit_bytes(device));
  // Below the physical size the driver never evicts by itself: deepum must (unless mode driver).
  options.enforce_resident_limit = session.allocations().holds_resident_limit(device);
  runtime->interval = std::chrono::microseconds(
      options.enforce_resident_limit ? std::min(config.worker_interval_us, config::kHeldWorkerIntervalUs)
                                     : config.worker_interval_us);
  core::logger().info("resident limit {}: {}", core::format_bytes(options.resident_limit_bytes),
                      !options.enforce_resident_limit
                          ? "not held, the driver evicts"
                          : "held by " + config::describe_moves(config) + " (mode " +
                                std::string(config::mode_name(config.mode)) + ")");
  // The engine orders its moves before the launches it sees: with tracing off it sees none.
  if (options.enforce_resident_limit && config.tracing != config::TracingLevel::off) {
    // Other devices get engines only beside a working first one: the callbacks the tracer enables
    // for copies depend on it.
    runtime->engines_allowed =
        runtime->engines.add(runtime->context, device, make_engine(session, device, options)) != nullptr;
  }
  // The engine needs the tensor sizes of launches; without it launches carry no extents.
  if (runtime->evictor()) runtime->live_buffers = std::make_unique<core::LiveBuffers>();
  auto pipeline = std::make_unique<EventPipeline>(options);
  runtime->pipeline = pipeline.get();
  session.attach_pipeline(std::move(pipeline));

  // Before the tracer starts: its sink records launch operands and copies only for a trace file.
  runtime->recorder = open_trace(session, device);
  if (config.tracing != config::TracingLevel::off) {
    runtime->lookup = std::make_unique<RegistryLookup>(session.registry(), runtime->live_buffers.get());
    runtime->sink =
        std::make_unique<PipelineSink>(*runtime->pipeline, runtime->engines, runtime->recorder != nullptr);
    runtime->tracer = std::make_unique<cupti_tracer::CuptiTracer>();
    cupti_tracer::TracerOptions tracer_options;
    tracer_options.level = tracer_level(config.tracing);
    tracer_options.dlsym = real_dlsym();
    tracer_options.driver = driver_api();
    tracer_options.managed = runtime->lookup.get();
    tracer_options.layouts = &function_layouts();
    // Copies are ordered behind evictions, and recorded for the simulator's replay of them.
    tracer_options.copy_callbacks = runtime->evictor() != nullptr || runtime->recorder != nullptr;
    tracer_options.own_calls = issuing_own_moves;
    tracer_options.cupti_path = config.cupti_library;
    tracer_options.um_counter_all_devices = true;
    tracer_options.um_counters = config.tracing == config::TracingLevel::full;
    // Thrashing needs more memory in use than the GPU (or the resident limit) holds.
    tracer_options.thrashing_counters =
        options.enforce_resident_limit ||
        session.allocations().alloc_limit_bytes(device) > session.allocations().device_total_bytes(device);
    // Enforcing the resident limit, every millisecond of delay lets faults overshoot it.
    const std::uint32_t flush_ms = options.enforce_resident_limit
                                       ? std::min(config.trace_flush_ms, config::kHeldTraceFlushMs)
                                       : config.trace_flush_ms;
    tracer_options.cupti_flush_period_ms = flush_ms;
    tracer_options.poll_period_ms = flush_ms;
    tracer_options.per_thread_buffers = config.trace_per_thread_buffers;
    // Our own exit handler flushes after stopping the worker; the tracer's runs after it.
    const cupti_tracer::StartStatus status = runtime->tracer->start(tracer_options, *runtime->sink);
    std::string line = std::string(cupti_tracer::to_string(status.outcome));
    if (!status.cupti_path.empty()) line += " (" + status.cupti_path + ")";
    if (!status.detail.empty()) line += ": " + status.detail;
    session.set_tracing_status(line);
    if (runtime->evictor() && (config.moves.place_fresh || config.moves.swap) &&
        !(status.launch_callbacks && status.copy_callbacks)) {
      runtime->placing_allowed = false;
      runtime->evictor()->stop_placing();
      core::logger().warn(
          "placement of fresh blocks and swaps are off: CUPTI refused a launch or copy callback, so deepum "
          "cannot see every use of fresh or swapped memory");
    }
    if (status.outcome == cupti_tracer::StartStatus::Outcome::started) {
      core::logger().info("tracing with CUPTI: {}", line);
    } else {
      core::logger().warn("tracing: {}; the program runs on{}", line,
                          status.running() ? " with what did start" : " untraced");
    }
  } else {
    session.set_tracing_status("off (tracing: off)");
  }

  g_runtime.store(runtime, std::memory_order_release);
  runtime->worker = start_worker(*runtime);
  std::atexit(stop_tracing_at_exit);
}

// The engine of the context current in this thread, made at the context's first allocation where
// the mode moves memory before launches and the device's resident limit is held. Called from the
// allocation hooks (never inside a CUPTI callback: making one creates streams, events and a thread).
StreamOrderedEvictor* engine_of_current_context(Runtime& runtime) {
  CUcontext current = current_context();
  const auto context = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(current));
  if (current == nullptr || context == runtime.context) return runtime.evictor();
  if (StreamOrderedEvictor* engine = runtime.engines.of_context(context)) return engine;
  if (!runtime.engines_allowed || runtime.engines.knows(context)) return nullptr;
  std::lock_guard lock(runtime.engines.adding());
  if (runtime.engines.knows(context)) return runtime.engines.of_context(context);
  CUdevice device = 0;
  if (driver::ctx_get_device.get() == nullptr || driver::ctx_get_device.get()(&device) != CUDA_SUCCESS)
    return runtime.engines.add(context, -1, nullptr);
  // Another context on a device that has an engine shares it: one device, one limit.
  if (StreamOrderedEvictor* engine = runtime.engines.of_device(device);
      engine != nullptr || device == runtime.device)
    return runtime.engines.add_alias(context, device, engine != nullptr ? engine : runtime.evictor());
  core::AllocationService& allocations = runtime.session->allocations();
  core::PipelineOptions options;
  options.resident_limit_bytes = allocations.resident_limit_bytes(device);
  options.eviction_headroom_bytes =
      runtime.session->config().eviction_headroom.resolve(options.resident_limit_bytes);
  std::unique_ptr<StreamOrderedEvictor> engine;
  if (allocations.holds_resident_limit(device)) {
    engine = make_engine(*runtime.session, device, options, /*first=*/false);
    if (engine) {
      core::logger().info("device {}: resident limit {} held by an engine of its own", device,
                          core::format_bytes(options.resident_limit_bytes));
      if (!runtime.placing_allowed || runtime.sink == nullptr || runtime.sink->placing_stopped())
        engine->stop_placing();
    }
  }
  return runtime.engines.add(context, device, std::move(engine));
}

}  // namespace

void start_tracing(core::Session& session) {
  std::call_once(g_start_once, [&] {
    try {
      start_once(session);
    } catch (const std::exception& e) {
      core::logger().error("tracing could not start ({}); the program runs on untraced", e.what());
    }
  });
}

void note_range_allocated(core::Session& session, std::uint64_t address, std::uint64_t bytes) {
  EventPipeline* pipeline = session.pipeline();
  if (pipeline == nullptr) return;
  // Not while a stream capture runs: placing waits for the move, which would invalidate it.
  if (pipeline->enforces_resident_limit() && !core::capture_gate().capturing()) {
    const std::string error = place_on_host(address, bytes);
    if (!error.empty() && session.first_time(core::OnceNotice::placement_failed)) {
      core::logger().warn("cannot place new memory on the host ({}): residency may be undercounted", error);
    }
  }
  if (Runtime* runtime = g_runtime.load(std::memory_order_acquire)) {
    if (StreamOrderedEvictor* engine = engine_of_current_context(*runtime))
      engine->on_range_allocated(address, bytes);
  }
  pipeline->on_range({core::RangeEvent::Kind::allocated, now_ns(), address, bytes});
}

void note_range_freeing(std::uint64_t address, std::uint64_t bytes, bool freed) {
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime == nullptr) return;
  if (!freed) {
    // The driver refused the free: the range lives on, in the context that tried to free it.
    if (StreamOrderedEvictor* engine = engine_of_current_context(*runtime))
      engine->on_range_allocated(address, bytes);
    return;
  }
  const bool one = runtime->engines.engines() == 1;
  runtime->engines.for_each([&](StreamOrderedEvictor& engine, int, std::uint64_t) {
    if (one || engine.holds(address)) engine.on_range_freed(address, bytes);
  });
}

void before_collective(const core::CollectiveBuffers& call, std::uint64_t stream) {
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime != nullptr && runtime->sink && !runtime->stopped.load(std::memory_order_acquire))
    // The communicator's device is the current one (NCCL requires it for the call).
    runtime->sink->before_collective(
        call, stream, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(current_context())));
}

void note_range_freed(core::Session& session, std::uint64_t address, std::uint64_t bytes) {
  if (EventPipeline* pipeline = session.pipeline()) {
    pipeline->on_range({core::RangeEvent::Kind::freed, now_ns(), address, bytes});
  }
}

void note_function_handed_out(std::uint64_t handle, bool kernel, std::uint64_t owner) {
  function_layouts().learn(handle,
                           kernel ? cupti_tracer::FunctionLayouts::Handle::kernel
                                  : cupti_tracer::FunctionLayouts::Handle::function,
                           owner);
}

void note_module_unloading(std::uint64_t owner) { function_layouts().forget_owner(owner); }

void before_stream_capture() {
  // One capture begins at a time: the first one's restore is done before any capture begins.
  static std::mutex beginning;
  std::lock_guard lock(beginning);
  if (!core::capture_gate().begin_capture()) return;
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime == nullptr) return;
  runtime->engines.for_each(
      [](StreamOrderedEvictor& engine, int, std::uint64_t) { engine.restore_before_capture(); });
}

void after_stream_capture() { core::capture_gate().end_capture(); }

namespace {
// The engine's context is going away: it stops for good (what it swapped dies with the memory).
void stop_engine_for_reset(Runtime& runtime, const char* why) {
  runtime.context_gone.store(true, std::memory_order_release);
  if (runtime.evictor()) runtime.evictor()->stop(/*contents_lost=*/true);
  if (runtime.session->first_time(core::OnceNotice::context_reset)) {
    core::logger().warn(
        "{}: deepum stops holding the resident limit (its streams lived in that context); allocations "
        "stay managed under the allocation limit",
        why);
  }
}

// Another device's context is going away: its engine stops for good, as the first one does.
void stop_other_engine(Runtime& runtime, std::uint64_t context, int device, bool inside_destruction) {
  runtime.engines.for_each(
      [&](StreamOrderedEvictor& engine, int engine_device, std::uint64_t engine_context) {
        if (engine_context == runtime.context ||
            (context != 0 ? engine_context != context : engine_device != device))
          return;
        if (inside_destruction) {
          engine.abandon_context();
        } else {
          engine.stop(/*contents_lost=*/true);
        }
        core::logger().warn("device {}'s context is going away: deepum stops holding its resident limit",
                            engine_device);
      });
}
}  // namespace

std::atomic<MemoryResetHook> g_memory_reset_hook{nullptr};

void set_memory_reset_hook(MemoryResetHook hook) {
  g_memory_reset_hook.store(hook, std::memory_order_release);
}

namespace {
// Inside the driver's destruction of deepum's context (CUPTI's callback), where no interposer saw
// it coming: the engine stops without waiting for its threads, the context's memory is forgotten.
void context_destroying(Runtime& runtime, std::uint64_t context) {
  program_value_waits().forget_context(context);  // its events are going away
  if (runtime.context != context) {
    stop_other_engine(runtime, context, -1, /*inside_destruction=*/true);
    return;
  }
  if (runtime.context_gone.exchange(true, std::memory_order_acq_rel)) return;
  if (runtime.evictor()) runtime.evictor()->abandon_context();
  function_layouts().forget_context_functions();
  if (MemoryResetHook hook = g_memory_reset_hook.load(std::memory_order_acquire)) hook(runtime.device);
  if (runtime.session->first_time(core::OnceNotice::context_reset)) {
    core::logger().warn(
        "deepum's context is being destroyed (cudaDeviceReset): deepum stops holding the resident limit; "
        "allocations stay managed under the allocation limit");
  }
}
}  // namespace

void PipelineSink::on_context_destroying(std::uint64_t context) {
  if (Runtime* runtime = g_runtime.load(std::memory_order_acquire)) context_destroying(*runtime, context);
}

void before_context_reset(int device) {
  function_layouts().forget_context_functions();
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime == nullptr) return;
  stop_other_engine(*runtime, 0, device, /*inside_destruction=*/false);
  if (runtime->device == device) stop_engine_for_reset(*runtime, "the device was reset");
}

void before_context_destroy(std::uint64_t context) {
  Runtime* runtime = g_runtime.load(std::memory_order_acquire);
  if (runtime == nullptr) return;
  program_value_waits().forget_context(context);
  if (runtime->context != context) {
    stop_other_engine(*runtime, context, -1, /*inside_destruction=*/false);
    return;
  }
  function_layouts().forget_context_functions();
  stop_engine_for_reset(*runtime, "deepum's context was destroyed");
}

void abandon_tracing_after_fork() {
  Runtime* runtime = g_runtime.exchange(nullptr);
  if (runtime == nullptr) return;
  if (runtime->tracer) runtime->tracer->abandon_after_fork();
  // The worker thread does not exist in the child; its std::thread stays unjoined in the leaked
  // Runtime, and the exit handler finds no runtime.
  runtime->stopped = true;
}

}  // namespace deepum::cuda
