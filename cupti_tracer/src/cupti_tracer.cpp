// The launch parameter structs (cuLaunchKernel_params, ...) come from generated_cuda_meta.h, which
// cupti.h includes; it has no include guard, so it must not be included again.
#include "deepum/cupti_tracer/cupti_tracer.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iterator>
#include <new>
#include <utility>

#include "deepum/core/capture_gate.hpp"
#include "deepum/core/stream_id.hpp"
#include "deepum/cupti_tracer/copy_call.hpp"

namespace deepum::cupti_tracer {
namespace {

// The tracer CUPTI's buffer callbacks (which carry no user data) report to.
std::atomic<CuptiTracer*> g_active{nullptr};

struct LaunchCallback {
  CUpti_CallbackId cbid;
  const char* name;
};
// In TracerStats::launches_by_api order.
constexpr LaunchCallback kLaunchCallbacks[] = {
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, "cuLaunchKernelEx"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel"},
    {CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, "cuLaunchCooperativeKernel_ptsz"},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cuGraphLaunch"},
    {CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, "cuGraphLaunch_ptsz"},
};
static_assert(std::size(kLaunchCallbacks) == kLaunchApiCount);
bool is_launch_callback(CUpti_CallbackId cbid) {
  return std::any_of(std::begin(kLaunchCallbacks), std::end(kLaunchCallbacks),
                     [cbid](const LaunchCallback& launch) { return launch.cbid == cbid; });
}
// The sink saw this thread's call at its entry (on_launch, on_copy) and is told at its exit.
thread_local bool t_reported_at_entry = false;

// A context going away takes deepum's streams and events in it along (cudaDeviceReset may reach
// the driver by a path no interposer sees).
constexpr CUpti_CallbackId kContextDestroying = CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING;

// What deepum needs first, then the driver's thrashing counters: they explain memory that stops
// faulting without being resident. Asked for together; without them if CUPTI refuses the set.
constexpr CUpti_ActivityUnifiedMemoryCounterKind kUmCounterKinds[] = {
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING,
    CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP,
};
constexpr std::size_t kEssentialUmCounterKinds = 3;

// Enabled with the kernel records: copy-engine operations, which fault on managed memory too.
struct CopyActivity {
  CUpti_ActivityKind kind;
  const char* name;
  const char* operations;
};
constexpr CopyActivity kCopyActivities[] = {
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", "copies"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", "memsets"},
};

constexpr const char* kGraphName = "<cuda-graph>";
constexpr const char* kUnknownName = "<unknown>";

template <typename Handle>
std::uint64_t id_of(Handle handle) noexcept {
  return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(handle));
}

// cuLaunchKernel, cuLaunchCooperativeKernel and their _ptsz twins: the same leading fields.
template <typename Params>
LaunchArguments classic_launch(const Params& p) noexcept {
  LaunchArguments args;
  args.function = id_of(p.f);
  args.stream = id_of(p.hStream);
  args.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
  args.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
  args.kernel_params = p.kernelParams;
  if constexpr (requires { p.extra; }) args.extra = p.extra;
  return args;
}

template <typename Params>
LaunchArguments ex_launch(const Params& p) noexcept {
  LaunchArguments args;
  args.function = id_of(p.f);
  if (p.config != nullptr) {
    args.stream = id_of(p.config->hStream);
    args.grid = {p.config->gridDimX, p.config->gridDimY, p.config->gridDimZ};
    args.block = {p.config->blockDimX, p.config->blockDimY, p.config->blockDimZ};
  }
  args.kernel_params = p.kernelParams;
  args.extra = p.extra;
  return args;
}

// Answers "no" to everything: launches carry no pointers when the session gave no lookup.
class NoManagedMemory final : public ManagedLookup {
 public:
  bool contains(std::uint64_t) const noexcept override { return false; }
  AddressBounds bounds() const noexcept override { return {0, 0}; }
};
const NoManagedMemory kNoManagedMemory;

void append(std::string& detail, const std::string& sentence) {
  if (!detail.empty()) detail += ' ';
  detail += sentence;
}

}  // namespace

const char* to_string(StartStatus::Outcome outcome) {
  switch (outcome) {
    case StartStatus::Outcome::started:
      return "started";
    case StartStatus::Outcome::partial:
      return "partly started";
    case StartStatus::Outcome::disabled:
      return "disabled";
    case StartStatus::Outcome::library_missing:
      return "libcupti not found";
    case StartStatus::Outcome::other_subscriber:
      return "another CUPTI client is attached";
    case StartStatus::Outcome::failed:
      return "failed";
    case StartStatus::Outcome::already_started:
      return "already started";
  }
  return "?";
}

const char* launch_api_name(std::size_t index) {
  return index < std::size(kLaunchCallbacks) ? kLaunchCallbacks[index].name : "?";
}

struct CuptiTracer::Counters {
  std::array<std::atomic<std::uint64_t>, kLaunchApiCount> launches_by_api{};
  std::atomic<std::uint64_t> launches{0};
  std::atomic<std::uint64_t> graph_launches{0};
  std::atomic<std::uint64_t> launches_with_managed_pointers{0};
  std::atomic<std::uint64_t> launches_pointers_truncated{0};
  std::atomic<std::uint64_t> launches_packed_buffer{0};
  std::atomic<std::uint64_t> launches_without_layout{0};
  std::atomic<std::uint64_t> managed_lookups{0};
  std::atomic<std::uint64_t> callback_exceptions{0};
  core::LatencyHistogram launch_callback, copy_callback;
  std::atomic<std::uint64_t> copies{0};
  std::atomic<std::uint64_t> copies_with_managed_operands{0};
  std::atomic<std::uint64_t> pointer_tables{0};
  std::atomic<std::uint64_t> record_errors{0};
  std::atomic<std::uint64_t> dropped_records{0};
  std::atomic<std::uint64_t> buffers_requested{0};
  std::atomic<std::uint64_t> buffers_completed{0};
  std::atomic<std::uint64_t> polls{0};
  std::atomic<std::uint64_t> polls_skipped_capturing{0};
  std::atomic<std::uint64_t> kernel_records_filtered{0};
};

namespace {
inline void bump(std::atomic<std::uint64_t>& counter, std::uint64_t by = 1) noexcept {
  counter.fetch_add(by, std::memory_order_relaxed);
}
}  // namespace

CuptiTracer::CuptiTracer() : counters_(std::make_unique<Counters>()) {}

CuptiTracer::~CuptiTracer() {
  stop();
  CuptiTracer* self = this;
  g_active.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

// ---- start ------------------------------------------------------------------------------------

StartStatus CuptiTracer::start(const TracerOptions& options, EventSink& sink) {
  using Outcome = StartStatus::Outcome;
  StartStatus status;
  try {
    if (library_ != nullptr) {
      status.outcome = Outcome::already_started;
      status.detail = "start() was already called on this tracer.";
      return status;
    }
    options_ = options;
    sink_ = &sink;
    const bool want_callbacks =
        options.level == TracingLevel::launches || options.level == TracingLevel::full;
    const bool want_activity =
        (options.level == TracingLevel::activity || options.level == TracingLevel::full) &&
        (options.kernel_records || options.um_counters);
    library_ = std::make_unique<CuptiLibrary>(options.cupti_path);
    if (!want_callbacks && !want_activity) {
      status.outcome = Outcome::disabled;
      return status;
    }

    if (!library_->load(options.dlsym)) {
      status.outcome = Outcome::library_missing;
      status.detail = "CUPTI tracing is off: no usable libcupti (tried: " + library_->error() + ").";
      for (char& c : status.detail) {
        if (c == '\n') c = ';';
      }
      return status;
    }
    status.cupti_path = library_->path();
    const CuptiApi& api = library_->api();

    CuptiTracer* expected = nullptr;
    if (!g_active.compare_exchange_strong(expected, this, std::memory_order_acq_rel)) {
      status.outcome = Outcome::already_started;
      status.detail = "CUPTI tracing is off: another deepum tracer is running in this process.";
      return status;
    }

    // The subscriber is our claim on CUPTI, even for activity-only tracing: registering activity
    // callbacks while another tool is attached would steal its records.
    CUptiResult result = CUPTI_SUCCESS;
    char other_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    if (api.subscribe_v2 != nullptr) {
      CUpti_SubscriberParams params{};
      params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
      params.subscriberName = "deepum";
      params.oldSubscriberName = other_name;
      params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
      result = api.subscribe_v2(&subscriber_, &CuptiTracer::on_callback, this, &params);
    } else {
      result = api.subscribe(&subscriber_, &CuptiTracer::on_callback, this);
    }
    if (result != CUPTI_SUCCESS) {
      subscriber_ = nullptr;
      g_active.store(nullptr, std::memory_order_release);
      if (result == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        status.outcome = Outcome::other_subscriber;
        status.detail = std::string("CUPTI tracing is off: another CUPTI client is attached") +
                        (other_name[0] != '\0' ? std::string(" (") + other_name + ")" : std::string()) +
                        " (torch.profiler, Nsight Systems/Compute, cuda-gdb and compute-sanitizer all use "
                        "CUPTI); deepum runs without launch and fault information.";
      } else {
        status.outcome = Outcome::failed;
        status.detail = "CUPTI tracing is off: cuptiSubscribe failed: " + library_->describe(result) + ".";
      }
      return status;
    }

    running_.store(true, std::memory_order_release);
    if (want_callbacks) {
      std::size_t enabled = 0;
      for (const LaunchCallback& callback : kLaunchCallbacks) {
        result = api.enable_callback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, callback.cbid);
        if (result == CUPTI_SUCCESS) {
          ++enabled;
        } else {
          append(status.detail,
                 std::string("Launches through ") + callback.name +
                     " are not seen: its callback could not be enabled: " + library_->describe(result) + ".");
        }
      }
      if (options.copy_callbacks) {
        std::size_t refused = 0;
        CUptiResult first_refusal = CUPTI_SUCCESS;
        for (CUpti_CallbackId cbid : copy_callback_ids()) {
          result = api.enable_callback(1, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
          if (result != CUPTI_SUCCESS && refused++ == 0) first_refusal = result;
        }
        status.copy_callbacks = refused == 0;
        if (refused != 0) {
          append(status.detail,
                 std::to_string(refused) + " of " + std::to_string(copy_callback_ids().size()) +
                     " copy and memset callbacks could not be enabled (" + library_->describe(first_refusal) +
                     "): evictions are not ordered before those copies, and what they "
                     "write is not seen.");
        }
      }
      if (result = api.enable_callback(1, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, kContextDestroying);
          result != CUPTI_SUCCESS) {
        append(status.detail, "The context-destroy callback could not be enabled (" +
                                  library_->describe(result) +
                                  "): after a cudaDeviceReset deepum may touch its dead streams.");
      }
      status.launch_callbacks = enabled == std::size(kLaunchCallbacks);
      callbacks_on_.store(enabled != 0, std::memory_order_release);
    }
    if (want_activity) status = enable_activity(std::move(status));

    const bool everything = (!want_callbacks || status.launch_callbacks) &&
                            (!want_activity || ((!options.kernel_records || status.kernel_records) &&
                                                (!options.um_counters || status.um_counters)));
    if (!status.running() && !callbacks_on_.load(std::memory_order_acquire)) {
      status.outcome = Outcome::failed;
      abandon_start();
      return status;
    }
    status.outcome = everything && status.detail.empty() ? Outcome::started : Outcome::partial;

    if (options.stop_at_exit) {
      static std::atomic<bool> registered{false};
      if (!registered.exchange(true)) std::atexit(&CuptiTracer::stop_at_exit);
    }
    return status;
  } catch (const std::exception& error) {
    status.outcome = Outcome::failed;
    append(status.detail, std::string("CUPTI tracer start failed: ") + error.what() + ".");
  } catch (...) {
    status.outcome = Outcome::failed;
    append(status.detail, "CUPTI tracer start failed.");
  }
  abandon_start();
  return status;
}

StartStatus CuptiTracer::enable_activity(StartStatus status) {
  const CuptiApi& api = library_->api();
  const TracerOptions& options = options_;

  if (options.cupti_buffers_in_host_memory) {
    if (api.activity_set_attribute == nullptr) {
      append(status.detail,
             "CUPTI kernel-timestamp buffers stay in device memory (no cuptiActivitySetAttribute).");
    } else {
      std::uint8_t host_pinned = 1;
      std::size_t value_size = sizeof(host_pinned);
      const CUptiResult result = api.activity_set_attribute(
          CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &value_size, &host_pinned);
      if (result != CUPTI_SUCCESS) {
        append(status.detail,
               "CUPTI kernel-timestamp buffers stay in device memory: " + library_->describe(result) + ".");
      }
    }
  }

  if (options.per_thread_buffers) {
    std::uint8_t per_thread = 1;
    std::size_t value_size = sizeof(per_thread);
    const CUptiResult result =
        api.activity_set_attribute == nullptr
            ? CUPTI_ERROR_NOT_SUPPORTED
            : api.activity_set_attribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &value_size,
                                         &per_thread);
    if (result != CUPTI_SUCCESS) {
      append(status.detail, "Activity buffers are shared between threads (fault records may arrive late): " +
                                library_->describe(result) + ".");
    }
  }

  pool_ = std::make_unique<BufferPool>(options.buffer_bytes, options.max_buffers);
  CUptiResult result =
      api.activity_register_callbacks(&CuptiTracer::on_buffer_requested, &CuptiTracer::on_buffer_completed);
  if (result != CUPTI_SUCCESS) {
    append(status.detail,
           "No activity records (kernel times, faults, migrations): "
           "cuptiActivityRegisterCallbacks failed: " +
               library_->describe(result) + ".");
    return status;
  }
  activity_registered_ = true;

  if (options.um_counters) {
    std::vector<std::uint32_t> devices = options.um_counter_devices;
    if (options.um_counter_all_devices && options.driver.device_get_count != nullptr) {
      int count = 0;
      if (options.driver.device_get_count(&count) == CUDA_SUCCESS && count > 0) {
        devices.clear();
        for (int device = 0; device < count; ++device) devices.push_back(static_cast<std::uint32_t>(device));
      }
    }
    if (devices.empty()) devices.push_back(0);
    auto configure = [&](std::size_t kinds) {
      std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> configs;
      for (std::uint32_t device : devices) {
        for (std::size_t k = 0; k < kinds; ++k) {
          CUpti_ActivityUnifiedMemoryCounterConfig config{};
          config.scope = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_SCOPE_PROCESS_SINGLE_DEVICE;
          config.kind = kUmCounterKinds[k];
          config.deviceId = device;
          config.enable = 1;
          configs.push_back(config);
        }
      }
      return api.activity_configure_unified_memory_counter(configs.data(),
                                                           static_cast<std::uint32_t>(configs.size()));
    };
    result = configure(options.thrashing_counters ? std::size(kUmCounterKinds) : kEssentialUmCounterKinds);
    if (result != CUPTI_SUCCESS && options.thrashing_counters) {
      const CUptiResult all_kinds = result;
      result = configure(kEssentialUmCounterKinds);
      if (result == CUPTI_SUCCESS) {
        append(status.detail, "The driver's thrashing counters are unavailable (" +
                                  library_->describe(all_kinds) +
                                  "): memory it maps remotely is not reported.");
      }
    }
    if (result == CUPTI_SUCCESS) result = api.activity_enable(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
    if (result == CUPTI_SUCCESS) {
      enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER);
      status.um_counters = true;
    } else {
      append(status.detail, "No GPU page faults or migrations: unified-memory counters unavailable: " +
                                library_->describe(result) + ".");
    }
  }
  if (options.kernel_records) {
    result = api.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (result == CUPTI_SUCCESS) {
      enabled_kinds_.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      status.kernel_records = true;
      kernel_records_on_.store(true, std::memory_order_release);
    } else {
      append(status.detail, "No kernel execution times: CONCURRENT_KERNEL activity unavailable: " +
                                library_->describe(result) + ".");
    }
    // Copies and memsets touch managed memory too: their faults are attributed to them.
    for (const CopyActivity& copy : kCopyActivities) {
      result = api.activity_enable(copy.kind);
      if (result == CUPTI_SUCCESS) {
        enabled_kinds_.push_back(copy.kind);
      } else {
        append(status.detail, std::string("Faults raised by ") + copy.operations + " are not attributed: " +
                                  copy.name + " activity unavailable: " + library_->describe(result) + ".");
      }
    }
  }
  if (enabled_kinds_.empty()) return status;

  if (options.cupti_flush_period_ms != 0) {
    if (api.activity_flush_period == nullptr) {
      append(status.detail, "CUPTI's flush period cannot be set (no cuptiActivityFlushPeriod).");
    } else if ((result = api.activity_flush_period(options.cupti_flush_period_ms)) != CUPTI_SUCCESS) {
      append(status.detail, "CUPTI's flush period could not be set: " + library_->describe(result) + ".");
    }
  }
  if (options.poll_period_ms != 0) {
    try {
      // The poll thread takes no signals: they stay with the program's threads.
      sigset_t all;
      sigset_t previous;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &previous);
      try {
        poll_thread_ = std::make_unique<std::thread>([this] { poll_loop(); });
      } catch (...) {
        pthread_sigmask(SIG_SETMASK, &previous, nullptr);
        throw;
      }
      pthread_sigmask(SIG_SETMASK, &previous, nullptr);
      pthread_setname_np(poll_thread_->native_handle(), "deepum-cupti");
    } catch (const std::exception& error) {
      append(status.detail, std::string("No poll thread (") + error.what() +
                                "): activity records arrive only when CUPTI's buffers fill or at flush().");
    }
  }
  return status;
}

// ---- launch callbacks -------------------------------------------------------------------------

void CUPTIAPI CuptiTracer::on_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                       const void* cbdata) noexcept {
  auto* self = static_cast<CuptiTracer*>(userdata);
  if (self == nullptr || cbdata == nullptr || !self->callbacks_on_.load(std::memory_order_acquire)) return;
  // Nothing may escape into CUPTI's C code: it would end the program.
  try {
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
      const auto& data = *static_cast<const CUpti_CallbackData*>(cbdata);
      if (data.functionParams == nullptr) return;
      if (self->options_.own_calls != nullptr && self->options_.own_calls()) return;
      if (data.callbackSite == CUPTI_API_EXIT) {
        // The driver has enqueued what the sink saw at this call's entry.
        if (std::exchange(t_reported_at_entry, false)) self->sink_->on_enqueued();
        return;
      }
      if (data.callbackSite != CUPTI_API_ENTER) return;
      // Every callback is timed: what the program's thread spends in deepum per launch.
      const auto begin = std::chrono::steady_clock::now();
      self->handle_launch(cbid, data);
      const auto spent = std::chrono::steady_clock::now() - begin;
      const auto ns =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(spent).count());
      (is_launch_callback(cbid) ? self->counters_->launch_callback : self->counters_->copy_callback)
          .record(ns);
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == kContextDestroying) {
      const auto& data = *static_cast<const CUpti_ResourceData*>(cbdata);
      self->sink_->on_context_destroying(id_of(data.context));
    }
  } catch (...) {
    bump(self->counters_->callback_exceptions);
  }
}

void CuptiTracer::handle_launch(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  const void* params = data.functionParams;
  LaunchArguments args;
  bool graph = false;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      args = classic_launch(*static_cast<const cuLaunchKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      args = classic_launch(*static_cast<const cuLaunchKernel_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      args = classic_launch(*static_cast<const cuLaunchCooperativeKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      args = classic_launch(*static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      args = ex_launch(*static_cast<const cuLaunchKernelEx_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      args = ex_launch(*static_cast<const cuLaunchKernelEx_ptsz_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch: {
      const auto& p = *static_cast<const cuGraphLaunch_params*>(params);
      args.function = id_of(p.hGraph);  // a CUgraphExec, despite the name
      args.stream = id_of(p.hStream);
      graph = true;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: {
      const auto& p = *static_cast<const cuGraphLaunch_ptsz_params*>(params);
      args.function = id_of(p.hGraphExec);
      args.stream = id_of(p.hStream);
      graph = true;
      break;
    }
    default:
      handle_copy(cbid, data);
      return;
  }
  // A _ptsz launch on stream 0 goes to the calling thread's default stream: name that stream, so
  // the id is the one a later call on it would use.
  const bool per_thread = cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
                          cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz ||
                          cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
                          cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
  if (per_thread && args.stream == 0) args.stream = id_of(CU_STREAM_PER_THREAD);
  args.stream = core::stream_id(args.stream);
  for (std::size_t i = 0; i < kLaunchApiCount; ++i) {
    if (kLaunchCallbacks[i].cbid == cbid) bump(counters_->launches_by_api[i]);
  }

  core::KernelLaunch launch;
  // Per thread, not on the stack: 4 KiB of pointers, needed only by foreach kernels.
  thread_local AllLaunchPointers every;
  every.count = 0;
  launch.correlation_id = data.correlationId;
  launch.context = id_of(data.context);
  std::uint64_t now = 0;
  if (library_->api().get_timestamp(&now) == CUPTI_SUCCESS) launch.host_time = now;

  // Never the driver here (see FunctionLayouts): a layout learned when the handle was handed out,
  // or none.
  FunctionLayouts* layouts = options_.layouts;
  const ParamLayout* layout = layouts != nullptr && !graph ? layouts->find(args.function) : nullptr;
  if (layouts != nullptr && layouts->first_launch(args.function)) {
    const bool named = data.symbolName != nullptr && data.symbolName[0] != '\0';
    sink_->on_function_name(args.function, graph ? kGraphName : named ? data.symbolName : kUnknownName);
  }

  if (graph) {
    launch.function = args.function;
    launch.stream = args.stream;
    launch.execution_key = execution_key(args.function, args.grid, args.block, {});
    launch.unnamed_memory = true;  // its kernels' arguments are not seen
    bump(counters_->graph_launches);
  } else {
    const ManagedLookup& managed = options_.managed != nullptr ? *options_.managed : kNoManagedMemory;
    const ScanOutcome outcome = scan_launch(args, layout, managed, launch, &every);
    bump(counters_->launches);
    if (launch.pointer_count != 0) bump(counters_->launches_with_managed_pointers);
    if (launch.pointers_truncated) bump(counters_->launches_pointers_truncated);
    if (outcome.path == ScanPath::packed_buffer) bump(counters_->launches_packed_buffer);
    if (outcome.path == ScanPath::no_layout) bump(counters_->launches_without_layout);
    if (outcome.lookups != 0) bump(counters_->managed_lookups, outcome.lookups);
  }
  const core::LaunchPointers all = every.view();
  t_reported_at_entry = true;
  sink_->on_launch(launch, all.count != 0 ? &all : nullptr);
}

void CuptiTracer::handle_copy(CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  const std::optional<CopyCall> call = decode_copy_call(cbid, data.functionParams);
  if (!call) return;
  bump(counters_->copies);
  // Stamped like launches: a trace file's copies are replayed in host-time order among them.
  const auto host_time = [this] {
    std::uint64_t now = 0;
    return library_->api().get_timestamp(&now) == CUPTI_SUCCESS ? now : 0;
  };
  if (!call->decoded) {
    core::CopyLaunch copy;  // no operands: what it reads and writes is unknown
    copy.unnamed_memory = true;
    copy.waits_for_value = call->waits_for_value;
    copy.stream = call->stream;
    copy.correlation_id = data.correlationId;
    copy.context = id_of(data.context);
    copy.host_time = host_time();
    t_reported_at_entry = true;
    sink_->on_copy(copy, nullptr);
    return;
  }
  const ManagedLookup& managed = options_.managed != nullptr ? *options_.managed : kNoManagedMemory;
  core::CopyLaunch copy = managed_operands(*call, managed);
  if (copy.operand_count == 0) return;
  bump(counters_->copies_with_managed_operands);
  copy.correlation_id = data.correlationId;
  copy.context = id_of(data.context);
  copy.host_time = host_time();
  thread_local AllLaunchPointers table;  // 4 KiB: not on the program's stack
  const bool read = pointers_in_host_source(*call, managed, table);
  if (read && table.count != 0) bump(counters_->pointer_tables);
  const core::LaunchPointers held = table.view();
  t_reported_at_entry = true;
  sink_->on_copy(copy, read && table.count != 0 ? &held : nullptr);
}

// ---- activity buffers -------------------------------------------------------------------------

void CUPTIAPI CuptiTracer::on_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) noexcept {
  if (buffer == nullptr || size == nullptr) return;
  *buffer = nullptr;
  *size = 0;
  if (max_records != nullptr) *max_records = 0;  // as many as fit
  CuptiTracer* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr || self->pool_ == nullptr) return;
  std::uint8_t* fresh = self->pool_->acquire();
  if (fresh == nullptr) return;  // CUPTI drops records until a buffer comes back
  *buffer = fresh;
  *size = self->pool_->buffer_bytes();
  bump(self->counters_->buffers_requested);
}

void CUPTIAPI CuptiTracer::on_buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t,
                                               size_t valid_size) noexcept {
  if (buffer == nullptr) return;
  CuptiTracer* self = g_active.load(std::memory_order_acquire);
  if (self == nullptr || self->pool_ == nullptr) {
    ::operator delete (buffer, std::align_val_t{BufferPool::kAlignment});  // the tracer is gone
    return;
  }
  self->drain(buffer, valid_size, context, stream_id);
  self->pool_->release(buffer);
}

void CuptiTracer::drain(uint8_t* buffer, size_t valid_size, CUcontext context, uint32_t stream_id) noexcept {
  bump(counters_->buffers_completed);
  const CuptiApi& api = library_->api();
  CUpti_Activity* record = nullptr;
  while (valid_size != 0) {
    const CUptiResult result = api.activity_get_next_record(buffer, valid_size, &record);
    if (result == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (result != CUPTI_SUCCESS) {
      bump(counters_->record_errors);
      break;
    }
    const DecodedRecord decoded = decoder_.decode(record);
    try {
      if (const auto* execution = std::get_if<core::KernelExecution>(&decoded)) {
        if (execution->operation == core::GpuOperation::kernel &&
            kernel_records_paused_.load(std::memory_order_relaxed)) {
          bump(counters_->kernel_records_filtered);
          continue;
        }
        sink_->on_execution(*execution);
      } else if (const auto* fault = std::get_if<core::PageFault>(&decoded)) {
        sink_->on_fault(*fault);
      } else if (const auto* migration = std::get_if<core::Migration>(&decoded)) {
        sink_->on_migration(*migration);
      } else if (const auto* action = std::get_if<core::DriverAction>(&decoded)) {
        sink_->on_driver_action(*action);
      }
    } catch (...) {
      bump(counters_->callback_exceptions);
    }
  }
  std::size_t dropped = 0;
  if (api.activity_get_num_dropped_records(context, stream_id, &dropped) == CUPTI_SUCCESS && dropped != 0) {
    bump(counters_->dropped_records, dropped);
  }
}

// ---- delivery, stop ---------------------------------------------------------------------------

void CuptiTracer::poll_loop() {
  std::unique_lock lock(poll_mutex_);
  const auto period = std::chrono::milliseconds(options_.poll_period_ms);
  while (!poll_stop_) {
    if (poll_wake_.wait_for(lock, period, [this] { return poll_stop_; })) break;
    lock.unlock();
    poll();
    lock.lock();
  }
}

void CuptiTracer::poll() noexcept {
  if (!running_.load(std::memory_order_acquire) || !activity_registered_) return;
  // A flush may wait for the GPU's records, which a stream capture forbids: the records wait.
  core::GateEntry entry;
  if (!entry) {
    bump(counters_->polls_skipped_capturing);
    return;
  }
  bump(counters_->polls);
  library_->api().activity_flush_all(0);
}

void CuptiTracer::flush() noexcept {
  if (!running_.load(std::memory_order_acquire) || !activity_registered_) return;
  library_->api().activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CuptiTracer::stop() noexcept {
  if (!running_.load(std::memory_order_acquire)) return;
  std::lock_guard stop_lock(stop_mutex_);
  if (!running_.load(std::memory_order_acquire)) return;
  const CuptiApi& api = library_->api();
  if (callbacks_on_.exchange(false, std::memory_order_acq_rel) && subscriber_ != nullptr) {
    for (const LaunchCallback& callback : kLaunchCallbacks) {
      api.enable_callback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, callback.cbid);
    }
    if (options_.copy_callbacks) {
      for (CUpti_CallbackId cbid : copy_callback_ids())
        api.enable_callback(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
    }
    api.enable_callback(0, subscriber_, CUPTI_CB_DOMAIN_RESOURCE, kContextDestroying);
  }
  if (poll_thread_ != nullptr) {
    {
      std::lock_guard lock(poll_mutex_);
      poll_stop_ = true;
    }
    poll_wake_.notify_all();
    try {
      if (poll_thread_->joinable()) {
        if (poll_thread_->get_id() == std::this_thread::get_id()) {
          poll_thread_->detach();
        } else {
          poll_thread_->join();
        }
      }
      poll_thread_.reset();
    } catch (...) {  // join failed: never destroy a joinable std::thread
      static_cast<void>(poll_thread_.release());
    }
  }
  if (activity_registered_) api.activity_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  kernel_records_on_.store(false, std::memory_order_release);
  for (CUpti_ActivityKind kind : enabled_kinds_) api.activity_disable(kind);
  enabled_kinds_.clear();
  if (subscriber_ != nullptr) api.unsubscribe(subscriber_);
  subscriber_ = nullptr;
  running_.store(false, std::memory_order_release);
}

void CuptiTracer::abandon_start() noexcept {
  stop();
  CuptiTracer* self = this;
  if (!activity_registered_) g_active.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

void CuptiTracer::stop_at_exit() noexcept {
  if (CuptiTracer* self = g_active.load(std::memory_order_acquire)) self->stop();
}

void CuptiTracer::set_kernel_records_paused(bool paused) noexcept {
  if (!kernel_records_on_.load(std::memory_order_acquire) || !running()) return;
  kernel_records_paused_.store(paused, std::memory_order_release);
}

void CuptiTracer::abandon_after_fork() noexcept {
  callbacks_on_.store(false, std::memory_order_release);
  running_.store(false, std::memory_order_release);
  // The thread does not exist in the child; its handle must never be joined or destroyed.
  if (poll_thread_ != nullptr) static_cast<void>(poll_thread_.release());
  subscriber_ = nullptr;
  activity_registered_ = false;
  enabled_kinds_.clear();
  CuptiTracer* self = this;
  g_active.compare_exchange_strong(self, nullptr, std::memory_order_acq_rel);
}

TracerStats CuptiTracer::stats() const noexcept {
  const Counters& c = *counters_;
  auto get = [](const std::atomic<std::uint64_t>& counter) {
    return counter.load(std::memory_order_relaxed);
  };
  TracerStats s;
  s.launches = get(c.launches);
  s.graph_launches = get(c.graph_launches);
  for (std::size_t i = 0; i < kLaunchApiCount; ++i) s.launches_by_api[i] = get(c.launches_by_api[i]);
  s.launches_with_managed_pointers = get(c.launches_with_managed_pointers);
  s.launches_pointers_truncated = get(c.launches_pointers_truncated);
  s.launches_packed_buffer = get(c.launches_packed_buffer);
  s.launches_without_layout = get(c.launches_without_layout);
  s.managed_lookups = get(c.managed_lookups);
  if (options_.layouts != nullptr) s.layouts = options_.layouts->stats();
  s.callback_exceptions = get(c.callback_exceptions);
  s.launch_callback = c.launch_callback.summary();
  s.copy_callback = c.copy_callback.summary();
  s.copies = get(c.copies);
  s.copies_with_managed_operands = get(c.copies_with_managed_operands);
  s.pointer_tables = get(c.pointer_tables);
  s.records = decoder_.counts();
  s.record_errors = get(c.record_errors);
  s.dropped_records = get(c.dropped_records);
  s.buffers_requested = get(c.buffers_requested);
  s.buffers_completed = get(c.buffers_completed);
  s.buffers_allocated = pool_ != nullptr ? pool_->allocated() : 0;
  s.buffers_refused = pool_ != nullptr ? pool_->refused() : 0;
  s.polls = get(c.polls);
  s.polls_skipped_capturing = get(c.polls_skipped_capturing);
  s.kernel_records_filtered = get(c.kernel_records_filtered);
  return s;
}

}  // namespace deepum::cupti_tracer
