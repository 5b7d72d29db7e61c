// Interposers for the CUDA driver API, reached three ways: direct calls (programs linked to
// libcuda), dlsym on libcuda (how cudart, static or shared, finds cuGetProcAddress), and
// cuGetProcAddress (how cudart, cuBLAS and others find every other driver function).
#include <cuda.h>

#include <cstring>
#include <iterator>
#include <vector>

#include "deepum/core/capture_gate.hpp"
#include "deepum/core/deferred_free_queue.hpp"
#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/tracing_session.hpp"
#include "driver_calls.hpp"
#include "driver_entry_points.hpp"
#include "framework_memory.hpp"
#include "hook_scope.hpp"
#include "interposer_support.hpp"

#undef cuGetProcAddress  // cuda.h renames it to _v2; we export both versions.

#define DEEPUM_EXPORT extern "C" __attribute__((visibility("default")))

using deepum::core::InterceptedApi;
using deepum::core::kNoMaxVersion;
using deepum::core::ManagedRange;
using deepum::core::StatusCodes;
using deepum::core::StreamVariant;

namespace deepum::preload {

thread_local int HookScope::depth_ = 0;

namespace driver {

namespace {
core::DeferredFreeQueue g_deferred_frees;
constexpr StatusCodes<CUresult> kCodes{CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY};
}  // namespace

std::string query_device_memory(config::DeviceMemory* memory) {
  auto fn = mem_get_info.get();
  if (fn == nullptr) return "libcuda.so.1 not found";
  size_t free_bytes = 0, total = 0;
  const CUresult result = fn(&free_bytes, &total);
  if (result != CUDA_SUCCESS) return cuda::describe("cuMemGetInfo", result);
  *memory = {free_bytes, total};
  return {};
}

int current_device() {
  CUdevice device = 0;
  return ctx_get_device.get() != nullptr && ctx_get_device.get()(&device) == CUDA_SUCCESS
             ? static_cast<int>(device)
             : 0;
}

bool capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return stream != nullptr && stream_is_capturing.get() != nullptr &&
         (stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS ||
          status != CU_STREAM_CAPTURE_STATUS_NONE);
}

CUresult free_after_stream(const ManagedRange& range, CUstream stream) {
  // Freed in a capture, memory the graph did not allocate: CUDA refuses that (measured: an H200,
  // CUDA 13.0, cudaFreeAsync of cudaMallocAsync memory from before the capture), and the range
  // stays allocated. Freeing it now would hand it out again while the graph still uses it.
  if (capturing(stream)) return CUDA_ERROR_INVALID_VALUE;
  CUevent event = nullptr;
  if (event_create.get()(&event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS) {
    if (event_record.get()(event, stream) == CUDA_SUCCESS) {
      g_deferred_frees.push({range.base, event});
      return CUDA_SUCCESS;
    }
    event_destroy.get()(event);
  }
  const CUresult synced = stream_synchronize.get()(stream);
  if (synced != CUDA_SUCCESS) return synced;
  return mem_free.get()(static_cast<CUdeviceptr>(range.base));
}

void reap_deferred_frees() {
  // Event queries: none while a stream capture runs (it would invalidate the capture). Only an
  // event that fired frees its memory: an error (a context in a sticky error) keeps it.
  core::GateEntry gate;
  if (!gate) return;
  g_deferred_frees.reap(
      [](void* event) { return event_query.get()(static_cast<CUevent>(event)) == CUDA_SUCCESS; },
      [](const core::DeferredFreeQueue::Entry& entry) {
        const CUresult freed = mem_free.get()(static_cast<CUdeviceptr>(entry.base));
        if (freed != CUDA_SUCCESS) {
          core::logger().warn("deferred free of {:#x} failed: {}", entry.base, cuda::describe("", freed));
        }
        event_destroy.get()(static_cast<CUevent>(entry.completion));
      });
}

void drop_deferred_frees() { g_deferred_frees.clear(); }

void forget_context_memory(int device) {
  drop_deferred_frees();
  if (core::Session* session = core::Session::if_created()) session->allocations().forget_device(device);
}

void lock_deferred_frees_for_fork() { g_deferred_frees.lock_for_fork(); }

void unlock_deferred_frees_after_fork(bool in_child) {
  g_deferred_frees.unlock_after_fork();
  if (in_child) g_deferred_frees.clear();
}

}  // namespace driver

namespace {

// The real functions behind our driver exports. Their pointers come from whoever saw them first:
// dlsym, cuGetProcAddress, or our own lookup in libcuda.
RealFunction<decltype(&::cuMemAlloc_v2)> real_mem_alloc{"cuMemAlloc_v2", Library::libcuda};
RealFunction<decltype(&::cuMemFree_v2)> real_mem_free{"cuMemFree_v2", Library::libcuda};
RealFunction<decltype(&::cuMemAllocPitch_v2)> real_mem_alloc_pitch{"cuMemAllocPitch_v2", Library::libcuda};
RealFunction<decltype(&::cuMemAllocAsync)> real_mem_alloc_async{"cuMemAllocAsync", Library::libcuda};
RealFunction<decltype(&::cuMemAllocAsync)> real_mem_alloc_async_ptsz{"cuMemAllocAsync_ptsz",
                                                                     Library::libcuda};
RealFunction<decltype(&::cuMemFreeAsync)> real_mem_free_async{"cuMemFreeAsync", Library::libcuda};
RealFunction<decltype(&::cuMemFreeAsync)> real_mem_free_async_ptsz{"cuMemFreeAsync_ptsz", Library::libcuda};
RealFunction<decltype(&::cuMemGetInfo_v2)> real_mem_get_info{"cuMemGetInfo_v2", Library::libcuda};
RealFunction<decltype(&::cuIpcGetMemHandle)> real_ipc_get_mem_handle{"cuIpcGetMemHandle", Library::libcuda};
RealFunction<decltype(&::cuMemCreate)> real_mem_create{"cuMemCreate", Library::libcuda};
RealFunction<decltype(&::cuMemAllocManaged)> real_mem_alloc_managed{"cuMemAllocManaged", Library::libcuda};
RealFunction<decltype(&::cuGetProcAddress_v2)> real_get_proc_address_v2{"cuGetProcAddress_v2",
                                                                        Library::libcuda};
using GetProcAddressV1 = CUresult (*)(const char*, void**, int, cuuint64_t);
RealFunction<GetProcAddressV1> real_get_proc_address_v1{"cuGetProcAddress", Library::libcuda};

// Allocates `bytes` of managed memory for a driver allocation call, or passes it through.
template <typename PassThrough>
CUresult allocate(InterceptedApi api, CUdeviceptr* dptr, size_t bytes, PassThrough&& pass_through) {
  HookScope scope;
  core::Session* session = scope.outermost() && dptr != nullptr && bytes != 0 ? managing_session() : nullptr;
  const int device = driver::current_device();
  if (session == nullptr || !ensure_limits_resolved(*session, device, driver::query_device_memory))
    return pass_through();
  cuda::start_tracing(*session);  // before the first managed allocation, as CUPTI requires
  driver::reap_deferred_frees();
  std::uintptr_t base = 0;
  const CUresult result = session->allocations().allocate(
      api, bytes, &base, driver::kCodes,
      [](std::uint64_t n, std::uintptr_t* out) {
        CUdeviceptr ptr = 0;
        const CUresult r = driver::mem_alloc_managed.get()(&ptr, n, CU_MEM_ATTACH_GLOBAL);
        *out = static_cast<std::uintptr_t>(ptr);
        return r;
      },
      log_refusal, device);
  if (result == CUDA_SUCCESS) {
    *dptr = static_cast<CUdeviceptr>(base);
    cuda::note_range_allocated(*session, base, bytes);
  }
  return result;
}

template <typename ReleaseManaged, typename PassThrough>
CUresult release(InterceptedApi api, CUdeviceptr dptr, ReleaseManaged&& release_managed,
                 PassThrough&& pass_through) {
  HookScope scope;
  core::Session* session = scope.outermost() && dptr != 0 ? managing_session() : nullptr;
  if (session == nullptr) return pass_through(static_cast<std::uintptr_t>(dptr));
  driver::reap_deferred_frees();
  return session->allocations().free(
      api, static_cast<std::uintptr_t>(dptr), driver::kCodes,
      [&](const ManagedRange& range) {
        cuda::note_range_freeing(range.base, range.bytes, /*freed=*/true);
        const CUresult result = release_managed(range);
        if (result == CUDA_SUCCESS) {
          cuda::note_range_freed(*session, range.base, range.bytes);
        } else {
          cuda::note_range_freeing(range.base, range.bytes, /*freed=*/false);
        }
        return result;
      },
      std::forward<PassThrough>(pass_through));
}

CUresult free_now(const ManagedRange& range) {
  return driver::mem_free.get()(static_cast<CUdeviceptr>(range.base));
}

// A stream given to a _ptsz entry point: 0 there means the calling thread's default stream.
CUstream per_thread(CUstream stream) { return stream == nullptr ? CU_STREAM_PER_THREAD : stream; }

CUresult alloc_async(RealFunction<decltype(&::cuMemAllocAsync)>& real, CUdeviceptr* dptr, size_t bytes,
                     CUstream stream) {
  const auto pass_through = [&] { return real.get()(dptr, bytes, stream); };
  if (driver::capturing(stream)) return pass_through();  // the graph's own allocation
  return allocate(InterceptedApi::cu_mem_alloc_async, dptr, bytes, pass_through);
}

CUresult free_async(RealFunction<decltype(&::cuMemFreeAsync)>& real, CUdeviceptr dptr, CUstream stream,
                    CUstream order_after) {
  return release(
      InterceptedApi::cu_mem_free_async, dptr,
      [order_after](const ManagedRange& range) { return driver::free_after_stream(range, order_after); },
      [&](std::uintptr_t base) { return real.get()(static_cast<CUdeviceptr>(base), stream); });
}

// Substitutes our interposer for a driver function handed out by cuGetProcAddress.
CUresult substitute_proc_address(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                 CUresult result) {
  if (result != CUDA_SUCCESS || pfn == nullptr || *pfn == nullptr || symbol == nullptr) return result;
  core::Session& session = core::Session::instance();
  if (!session.active()) return result;
  const bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  if (const DriverEntryPoint* entry =
          core::find_by_proc_address(driver_entry_points(), symbol, cuda_version, per_thread)) {
    entry->adopt_real(*pfn);
    *pfn = entry->interposer;
    session.stats().count_entry_point_via_get_proc_address();
  }
  return result;
}

}  // namespace
}  // namespace deepum::preload

using namespace deepum::preload;  // NOLINT: the exports below are the shim over that namespace

DEEPUM_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
  return allocate(InterceptedApi::cu_mem_alloc, dptr, bytesize,
                  [&] { return real_mem_alloc.get()(dptr, bytesize); });
}

DEEPUM_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pitch, size_t width, size_t height,
                                          unsigned int element_size) {
  bool passed_through = false;
  auto pass_through = [&] {
    passed_through = true;
    return real_mem_alloc_pitch.get()(dptr, pitch, width, height, element_size);
  };
  const bool valid = pitch != nullptr && width != 0 && height != 0 &&
                     (element_size == 4 || element_size == 8 || element_size == 16);
  if (!valid) return pass_through();  // the driver's own error for bad arguments
  const size_t row = (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
  const CUresult result = allocate(InterceptedApi::cu_mem_alloc_pitch, dptr, row * height, pass_through);
  if (result == CUDA_SUCCESS && !passed_through) *pitch = row;
  return result;
}

DEEPUM_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return alloc_async(real_mem_alloc_async, dptr, bytesize, stream);
}

DEEPUM_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
  return alloc_async(real_mem_alloc_async_ptsz, dptr, bytesize, stream);
}

DEEPUM_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
  return release(InterceptedApi::cu_mem_free, dptr, free_now,
                 [](std::uintptr_t base) { return real_mem_free.get()(static_cast<CUdeviceptr>(base)); });
}

DEEPUM_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
  return free_async(real_mem_free_async, dptr, stream, stream);
}

DEEPUM_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
  return free_async(real_mem_free_async_ptsz, dptr, stream, per_thread(stream));
}

DEEPUM_EXPORT CUresult cuMemGetInfo_v2(size_t* free_bytes, size_t* total_bytes) {
  HookScope scope;
  auto pass_through = [&] { return real_mem_get_info.get()(free_bytes, total_bytes); };
  deepum::core::Session* session = scope.outermost() ? managing_session() : nullptr;
  const int device = driver::current_device();
  if (session == nullptr || free_bytes == nullptr || total_bytes == nullptr ||
      !ensure_limits_resolved(*session, device, driver::query_device_memory)) {
    return pass_through();
  }
  session->stats().count_call(InterceptedApi::cu_mem_get_info);
  const deepum::core::DeviceMemoryInfo view = session->allocations().device_view(device);
  *free_bytes = view.free_bytes;
  *total_bytes = view.total_bytes;
  return CUDA_SUCCESS;
}

DEEPUM_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr dptr) {
  HookScope scope;
  const CUresult result = real_ipc_get_mem_handle.get()(handle, dptr);
  deepum::core::Session* session = scope.outermost() ? managing_session() : nullptr;
  if (session != nullptr) {
    session->stats().count_call(InterceptedApi::cu_ipc_get_mem_handle);
    if (result != CUDA_SUCCESS) {
      session->stats().count_failed(InterceptedApi::cu_ipc_get_mem_handle);
      explain_ipc_failure(*session, reinterpret_cast<const void*>(dptr));
    }
  }
  return result;
}

DEEPUM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                   const CUmemAllocationProp* prop, unsigned long long flags) {
  HookScope scope;
  deepum::core::Session* session = scope.outermost() ? managing_session() : nullptr;
  if (session != nullptr) {
    session->stats().count_call(InterceptedApi::cu_mem_create);
    note_physical_allocation(*session, size);
  }
  return real_mem_create.get()(handle, size, prop, flags);
}

// The program's own unified memory (XLA's, steered at load; cudaMallocManaged's) is deepum's too,
// under its limits. Host-attached memory is left as the program asked for it.
DEEPUM_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
  const auto pass_through = [&] { return real_mem_alloc_managed.get()(dptr, bytesize, flags); };
  if (flags != CU_MEM_ATTACH_GLOBAL) return pass_through();
  const CUresult result = allocate(InterceptedApi::cu_mem_alloc_managed, dptr, bytesize, pass_through);
  deepum::core::Session* session = deepum::core::Session::if_created();
  if (result == CUDA_SUCCESS && session != nullptr && session->active() &&
      session->registry().find_containing(static_cast<std::uintptr_t>(*dptr))) {
    note_program_managed_allocation(*session);
  }
  return result;
}

DEEPUM_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                                           CUdriverProcAddressQueryResult* status) {
  auto real = real_get_proc_address_v2.get();
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  HookScope scope;
  const CUresult result = real(symbol, pfn, cuda_version, flags, status);
  if (scope.outermost())
    deepum::core::Session::instance().stats().count_call(InterceptedApi::cu_get_proc_address);
  return substitute_proc_address(symbol, pfn, cuda_version, flags, result);
}

DEEPUM_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags) {
  auto real = real_get_proc_address_v1.get();
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  HookScope scope;
  const CUresult result = real(symbol, pfn, cuda_version, flags);
  if (scope.outermost())
    deepum::core::Session::instance().stats().count_call(InterceptedApi::cu_get_proc_address);
  return substitute_proc_address(symbol, pfn, cuda_version, flags, result);
}

namespace deepum::preload {

// Every driver export, with the names and versions under which the driver hands it out.
const DriverEntryPoint kDriverEntryPoints[] = {
    {{"cuMemAlloc_v2", "cuMemAlloc", 3020, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuMemAlloc_v2),
     [](void* fn) { real_mem_alloc.set(fn); }},
    {{"cuMemAllocPitch_v2", "cuMemAllocPitch", 3020, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuMemAllocPitch_v2),
     [](void* fn) { real_mem_alloc_pitch.set(fn); }},
    {{"cuMemFree_v2", "cuMemFree", 3020, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuMemFree_v2),
     [](void* fn) { real_mem_free.set(fn); }},
    {{"cuMemGetInfo_v2", "cuMemGetInfo", 3020, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuMemGetInfo_v2),
     [](void* fn) { real_mem_get_info.set(fn); }},
    {{"cuMemAllocAsync", "cuMemAllocAsync", 11020, kNoMaxVersion, StreamVariant::legacy},
     reinterpret_cast<void*>(&cuMemAllocAsync),
     [](void* fn) { real_mem_alloc_async.set(fn); }},
    {{"cuMemAllocAsync_ptsz", "cuMemAllocAsync", 11020, kNoMaxVersion, StreamVariant::per_thread},
     reinterpret_cast<void*>(&cuMemAllocAsync_ptsz),
     [](void* fn) { real_mem_alloc_async_ptsz.set(fn); }},
    {{"cuMemFreeAsync", "cuMemFreeAsync", 11020, kNoMaxVersion, StreamVariant::legacy},
     reinterpret_cast<void*>(&cuMemFreeAsync),
     [](void* fn) { real_mem_free_async.set(fn); }},
    {{"cuMemFreeAsync_ptsz", "cuMemFreeAsync", 11020, kNoMaxVersion, StreamVariant::per_thread},
     reinterpret_cast<void*>(&cuMemFreeAsync_ptsz),
     [](void* fn) { real_mem_free_async_ptsz.set(fn); }},
    {{"cuIpcGetMemHandle", "cuIpcGetMemHandle", 4010, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuIpcGetMemHandle),
     [](void* fn) { real_ipc_get_mem_handle.set(fn); }},
    {{"cuMemCreate", "cuMemCreate", 10020, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuMemCreate),
     [](void* fn) { real_mem_create.set(fn); }},
    {{"cuMemAllocManaged", "cuMemAllocManaged", 6000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuMemAllocManaged),
     [](void* fn) { real_mem_alloc_managed.set(fn); }},
    {{"cuGetProcAddress_v2", "cuGetProcAddress", 12000, kNoMaxVersion, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuGetProcAddress_v2),
     [](void* fn) { real_get_proc_address_v2.set(fn); }},
    {{"cuGetProcAddress", "cuGetProcAddress", 11030, 12000, StreamVariant::not_applicable},
     reinterpret_cast<void*>(&cuGetProcAddress),
     [](void* fn) { real_get_proc_address_v1.set(fn); }},
};

std::span<const DriverEntryPoint> memory_entry_points() { return kDriverEntryPoints; }

std::span<const DriverEntryPoint> driver_entry_points() {
  static const std::vector<DriverEntryPoint> all = [] {
    std::vector<DriverEntryPoint> entries(memory_entry_points().begin(), memory_entry_points().end());
    entries.insert(entries.end(), lifecycle_entry_points().begin(), lifecycle_entry_points().end());
    return entries;
  }();
  return all;
}

}  // namespace deepum::preload
