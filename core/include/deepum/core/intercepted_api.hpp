// The CUDA entry points deepum intercepts, named once so statistics and logs agree. Pure C++.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace deepum::core {

enum class InterceptedApi : std::size_t {
  cuda_malloc,
  cuda_malloc_async,
  cuda_malloc_pitch,
  cuda_free,
  cuda_free_async,
  cuda_mem_get_info,
  cuda_ipc_get_mem_handle,
  cu_mem_alloc,
  cu_mem_alloc_async,
  cu_mem_alloc_pitch,
  cu_mem_free,
  cu_mem_free_async,
  cu_mem_get_info,
  cu_ipc_get_mem_handle,
  cu_mem_create,
  cu_get_proc_address,
  cu_mem_alloc_managed,
  count
};

inline constexpr std::size_t kInterceptedApiCount = static_cast<std::size_t>(InterceptedApi::count);

inline constexpr std::array<std::string_view, kInterceptedApiCount> kInterceptedApiNames = {
    "cudaMalloc",       "cudaMallocAsync",     "cudaMallocPitch", "cudaFree",          "cudaFreeAsync",
    "cudaMemGetInfo",   "cudaIpcGetMemHandle", "cuMemAlloc",      "cuMemAllocAsync",   "cuMemAllocPitch",
    "cuMemFree",        "cuMemFreeAsync",      "cuMemGetInfo",    "cuIpcGetMemHandle", "cuMemCreate",
    "cuGetProcAddress", "cuMemAllocManaged"};

constexpr std::string_view api_name(InterceptedApi api) {
  return kInterceptedApiNames[static_cast<std::size_t>(api)];
}

}  // namespace deepum::core
