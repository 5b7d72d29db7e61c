// The CUPTI use that deadlocked a Hugging Face BERT-large run under deepum's default settings,
// done by this program itself with no deepum loaded: a launch callback that asks the driver for the
// kernel's parameter layout, a thread that pauses and resumes kernel records
// (cuptiActivityDisable/Enable), and one that flushes CUPTI's buffers. tracer_stress runs it with
// --old-callback-pattern to show that its load finds that deadlock on the driver in use; under
// deepum, which no longer does any of it while launches run, the same load must pass.
#include "old_callback_pattern.hpp"

#include <cupti.h>
#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

struct Cupti {
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableDomain) enable_domain = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
};

Cupti g_cupti;

template <typename Function>
bool find(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

// What deepum's callback did for a kernel it had no layout for: ask for each parameter in turn,
// as a function handle, else as a library kernel (cudart launches CUkernel handles as CUfunction).
void ask_parameter_layout(CUfunction function) {
  std::size_t offset = 0, size = 0;
  const bool as_function = cuFuncGetParamInfo(function, 0, &offset, &size) == CUDA_SUCCESS;
  auto* kernel = reinterpret_cast<CUkernel>(function);
  if (!as_function && cuKernelGetParamInfo(kernel, 0, &offset, &size) != CUDA_SUCCESS) return;
  for (std::size_t index = 1; index < 64; ++index) {
    const CUresult r = as_function ? cuFuncGetParamInfo(function, index, &offset, &size)
                                   : cuKernelGetParamInfo(kernel, index, &offset, &size);
    if (r != CUDA_SUCCESS) return;
  }
}

void CUPTIAPI on_driver_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || info->callbackSite != CUPTI_API_ENTER) return;
  if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz)
    ask_parameter_layout(static_cast<const cuLaunchKernel_params*>(info->functionParams)->f);
  if (id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz)
    ask_parameter_layout(static_cast<const cuLaunchKernelEx_params*>(info->functionParams)->f);
}

void CUPTIAPI give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBytes));
  *size = *buffer != nullptr ? kBytes : 0;
  *max_records = 0;
}

void CUPTIAPI take_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) { std::free(buffer); }

// As deepum's worker paused kernel records after a second without faults, only far more often.
void toggle_kernel_records(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    g_cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    g_cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

// As deepum's poll thread flushed every few milliseconds.
void flush_records(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    g_cupti.flush_all(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

std::string start_old_callback_pattern(OldPatternParts parts, const std::atomic<bool>& stop,
                                       std::vector<std::thread>& threads) {
  void* library = dlopen("libcupti.so.13", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) library = dlopen("libcupti.so", RTLD_NOW | RTLD_GLOBAL);
  if (library == nullptr) return std::string("cannot load libcupti: ") + dlerror();
  if (!find(library, "cuptiSubscribe", g_cupti.subscribe) ||
      !find(library, "cuptiEnableDomain", g_cupti.enable_domain) ||
      !find(library, "cuptiActivityRegisterCallbacks", g_cupti.register_callbacks) ||
      !find(library, "cuptiActivityEnable", g_cupti.enable) ||
      !find(library, "cuptiActivityDisable", g_cupti.disable) ||
      !find(library, "cuptiActivityFlushAll", g_cupti.flush_all))
    return "libcupti lacks a function this harness calls";
  CUpti_SubscriberHandle subscriber = nullptr;
  if (g_cupti.subscribe(&subscriber, on_driver_call, nullptr) != CUPTI_SUCCESS)
    return "cannot subscribe to CUPTI (another CUPTI client?)";
  if (parts != OldPatternParts::records_only &&
      g_cupti.enable_domain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS)
    return "cannot enable CUPTI's driver callbacks";
  if (g_cupti.register_callbacks(give_buffer, take_buffer) != CUPTI_SUCCESS ||
      g_cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS ||
      g_cupti.enable(CUPTI_ACTIVITY_KIND_MEMCPY) != CUPTI_SUCCESS)
    return "cannot enable CUPTI's activity records";
  if (parts == OldPatternParts::callback_only) return {};
  threads.emplace_back(toggle_kernel_records, std::cref(stop));
  threads.emplace_back(flush_records, std::cref(stop));
  return {};
}
