// Interposers for the CUDA runtime API of a program that links libcudart.so dynamically (PyTorch,
// CuPy). Programs with a static cudart never call these; they are caught at the driver level.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "deepum/cuda/real_function.hpp"
#include "deepum/cuda/tracing_session.hpp"
#include "driver_calls.hpp"
#include "hook_scope.hpp"
#include "interposer_support.hpp"

#define DEEPUM_EXPORT extern "C" __attribute__((visibility("default")))

using deepum::core::InterceptedApi;
using deepum::core::ManagedRange;
using deepum::core::StatusCodes;

namespace deepum::preload {
namespace {

constexpr StatusCodes<cudaError_t> kCodes{cudaSuccess, cudaErrorMemoryAllocation};

RealFunction<decltype(&::cudaMallocManaged)> real_malloc_managed{"cudaMallocManaged", Library::cudart};
RealFunction<decltype(&::cudaMalloc)> real_malloc{"cudaMalloc", Library::cudart};
RealFunction<decltype(&::cudaFree)> real_free{"cudaFree", Library::cudart};
RealFunction<decltype(&::cudaMallocPitch)> real_malloc_pitch{"cudaMallocPitch", Library::cudart};
RealFunction<decltype(&::cudaMemGetInfo)> real_mem_get_info{"cudaMemGetInfo", Library::cudart};
RealFunction<decltype(&::cudaIpcGetMemHandle)> real_ipc_get_mem_handle{"cudaIpcGetMemHandle",
                                                                       Library::cudart};
RealFunction<decltype(&::cudaGetErrorName)> real_get_error_name{"cudaGetErrorName", Library::cudart};
RealFunction<decltype(&::cudaGetDevice)> real_get_device{"cudaGetDevice", Library::cudart};
using MallocAsyncFn = cudaError_t (*)(void**, size_t, cudaStream_t);
using FreeAsyncFn = cudaError_t (*)(void*, cudaStream_t);
RealFunction<MallocAsyncFn> real_malloc_async{"cudaMallocAsync", Library::cudart};
RealFunction<MallocAsyncFn> real_malloc_async_ptsz{"cudaMallocAsync_ptsz", Library::cudart};
RealFunction<FreeAsyncFn> real_free_async{"cudaFreeAsync", Library::cudart};
RealFunction<FreeAsyncFn> real_free_async_ptsz{"cudaFreeAsync_ptsz", Library::cudart};

// The runtime answers when its library is missing (it cannot be: the program called into it).
constexpr cudaError_t kNoRuntime = cudaErrorInitializationError;

// The runtime's current device: whose allocation limit a runtime allocation counts against.
int current_device() {
  int device = 0;
  auto get = real_get_device.get();
  return get != nullptr && get(&device) == cudaSuccess ? device : 0;
}

std::string query_device_memory(config::DeviceMemory* memory) {
  size_t free_bytes = 0, total = 0;
  const cudaError_t error = real_mem_get_info.get()(&free_bytes, &total);
  if (error != cudaSuccess) {
    auto name = real_get_error_name.get();
    return std::string("cudaMemGetInfo: ") + (name ? name(error) : "error") + " (" +
           std::to_string(static_cast<int>(error)) + ")";
  }
  *memory = {free_bytes, total};
  return {};
}

// Allocates `bytes` of managed memory for a runtime allocation call, or passes it through.
template <typename PassThrough>
cudaError_t allocate(InterceptedApi api, void** out, size_t bytes, PassThrough&& pass_through) {
  HookScope scope;
  core::Session* session = scope.outermost() && out != nullptr && bytes != 0 ? managing_session() : nullptr;
  const int device = session != nullptr ? current_device() : 0;
  if (session == nullptr || real_malloc_managed.get() == nullptr ||
      !ensure_limits_resolved(*session, device, query_device_memory)) {
    return pass_through();
  }
  cuda::start_tracing(*session);  // before the first managed allocation, as CUPTI requires
  driver::reap_deferred_frees();
  std::uintptr_t base = 0;
  const cudaError_t error = session->allocations().allocate(
      api, bytes, &base, kCodes,
      [](std::uint64_t n, std::uintptr_t* result) {
        void* ptr = nullptr;
        const cudaError_t e = real_malloc_managed.get()(&ptr, n, cudaMemAttachGlobal);
        *result = reinterpret_cast<std::uintptr_t>(ptr);
        return e;
      },
      log_refusal, device);
  if (error == cudaSuccess) {
    *out = reinterpret_cast<void*>(base);
    cuda::note_range_allocated(*session, base, bytes);
  }
  return error;
}

template <typename ReleaseManaged, typename PassThrough>
cudaError_t release(InterceptedApi api, void* ptr, ReleaseManaged&& release_managed,
                    PassThrough&& pass_through) {
  HookScope scope;
  core::Session* session = scope.outermost() && ptr != nullptr ? managing_session() : nullptr;
  if (session == nullptr) return pass_through(reinterpret_cast<std::uintptr_t>(ptr));
  driver::reap_deferred_frees();
  return session->allocations().free(
      api, reinterpret_cast<std::uintptr_t>(ptr), kCodes,
      [&](const ManagedRange& range) {
        cuda::note_range_freeing(range.base, range.bytes, /*freed=*/true);
        const cudaError_t error = release_managed(range);
        if (error == cudaSuccess) {
          cuda::note_range_freed(*session, range.base, range.bytes);
        } else {
          cuda::note_range_freeing(range.base, range.bytes, /*freed=*/false);
        }
        return error;
      },
      std::forward<PassThrough>(pass_through));
}

cudaError_t call_or_missing(auto fn, auto... args) { return fn != nullptr ? fn(args...) : kNoRuntime; }

cudaError_t malloc_async(RealFunction<MallocAsyncFn>& real, void** ptr, size_t size, cudaStream_t stream) {
  const auto pass_through = [&] { return call_or_missing(real.get(), ptr, size, stream); };
  if (driver::capturing(stream)) return pass_through();  // the graph's own allocation
  return allocate(InterceptedApi::cuda_malloc_async, ptr, size, pass_through);
}

cudaError_t free_async(RealFunction<FreeAsyncFn>& real, void* ptr, cudaStream_t stream,
                       cudaStream_t order_after) {
  return release(
      InterceptedApi::cuda_free_async, ptr,
      [order_after](const ManagedRange& range) {
        // The runtime shares the driver's numbering for the errors this path can return.
        return static_cast<cudaError_t>(driver::free_after_stream(range, order_after));
      },
      [&](std::uintptr_t base) {
        return call_or_missing(real.get(), reinterpret_cast<void*>(base), stream);
      });
}

}  // namespace
}  // namespace deepum::preload

using namespace deepum::preload;  // NOLINT: the exports below are the shim over that namespace

DEEPUM_EXPORT cudaError_t cudaMalloc(void** ptr, size_t size) {
  return allocate(InterceptedApi::cuda_malloc, ptr, size,
                  [&] { return call_or_missing(real_malloc.get(), ptr, size); });
}

DEEPUM_EXPORT cudaError_t cudaFree(void* ptr) {
  auto free_fn = [](std::uintptr_t base) {
    return call_or_missing(real_free.get(), reinterpret_cast<void*>(base));
  };
  return release(
      InterceptedApi::cuda_free, ptr, [&](const ManagedRange& range) { return free_fn(range.base); },
      free_fn);
}

DEEPUM_EXPORT cudaError_t cudaMallocAsync(void** ptr, size_t size, cudaStream_t stream) {
  return malloc_async(real_malloc_async, ptr, size, stream);
}

DEEPUM_EXPORT cudaError_t cudaMallocAsync_ptsz(void** ptr, size_t size, cudaStream_t stream) {
  return malloc_async(real_malloc_async_ptsz, ptr, size, stream);
}

DEEPUM_EXPORT cudaError_t cudaFreeAsync(void* ptr, cudaStream_t stream) {
  return free_async(real_free_async, ptr, stream, stream);
}

DEEPUM_EXPORT cudaError_t cudaFreeAsync_ptsz(void* ptr, cudaStream_t stream) {
  return free_async(real_free_async_ptsz, ptr, stream, stream == nullptr ? cudaStreamPerThread : stream);
}

DEEPUM_EXPORT cudaError_t cudaMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  bool passed_through = false;
  auto pass_through = [&] {
    passed_through = true;
    return call_or_missing(real_malloc_pitch.get(), ptr, pitch, width, height);
  };
  if (pitch == nullptr || width == 0 || height == 0) return pass_through();  // CUDA's own error or no-op
  const size_t row = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  const cudaError_t error = allocate(InterceptedApi::cuda_malloc_pitch, ptr, row * height, pass_through);
  if (error == cudaSuccess && !passed_through) *pitch = row;
  return error;
}

DEEPUM_EXPORT cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  HookScope scope;
  auto pass_through = [&] { return call_or_missing(real_mem_get_info.get(), free_bytes, total_bytes); };
  deepum::core::Session* session = scope.outermost() ? managing_session() : nullptr;
  const int device = session != nullptr ? current_device() : 0;
  if (session == nullptr || free_bytes == nullptr || total_bytes == nullptr ||
      !ensure_limits_resolved(*session, device, query_device_memory)) {
    return pass_through();
  }
  session->stats().count_call(InterceptedApi::cuda_mem_get_info);
  const deepum::core::DeviceMemoryInfo view = session->allocations().device_view(device);
  *free_bytes = view.free_bytes;
  *total_bytes = view.total_bytes;
  return cudaSuccess;
}

DEEPUM_EXPORT cudaError_t cudaIpcGetMemHandle(cudaIpcMemHandle_t* handle, void* ptr) {
  HookScope scope;
  const cudaError_t error = call_or_missing(real_ipc_get_mem_handle.get(), handle, ptr);
  deepum::core::Session* session = scope.outermost() ? managing_session() : nullptr;
  if (session != nullptr) {
    session->stats().count_call(InterceptedApi::cuda_ipc_get_mem_handle);
    if (error != cudaSuccess) {
      session->stats().count_failed(InterceptedApi::cuda_ipc_get_mem_handle);
      explain_ipc_failure(*session, ptr);
    }
  }
  return error;
}
