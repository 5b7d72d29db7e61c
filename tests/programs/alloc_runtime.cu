// Integration test program for the runtime API. Built twice: with a shared cudart (the route
// PyTorch takes) and with nvcc's default static cudart (caught at the driver level by deepum).
// Run under libdeepum.so with DEEPUM_ALLOC_LIMIT = argv[1] bytes; checks that every allocation is
// managed memory, works, respects the limit, and that cudaMemGetInfo shows deepum's view.
// With --probe-error it only prints what cudaMalloc returns (for the no-GPU test).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "check.hpp"

namespace {

__global__ void fill(std::uint32_t* data, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    data[i] = static_cast<std::uint32_t>(i) * 2654435761u + seed;
  }
}

bool is_managed(const void* ptr) {
  cudaPointerAttributes attributes{};
  return cudaPointerGetAttributes(&attributes, ptr) == cudaSuccess &&
         attributes.type == cudaMemoryTypeManaged;
}

// Fills on the GPU and reads back on the host directly: only managed memory allows the latter.
bool fill_and_verify(std::uint32_t* data, std::size_t n, std::uint32_t seed, cudaStream_t stream) {
  fill<<<256, 256, 0, stream>>>(data, n, seed);
  if (cudaStreamSynchronize(stream) != cudaSuccess) return false;
  for (std::size_t i = 0; i < n; i += 4099) {
    if (data[i] != static_cast<std::uint32_t>(i) * 2654435761u + seed) return false;
  }
  return true;
}

using CuMemAllocFn = int (*)(unsigned long long*, std::size_t);
using CuMemFreeFn = int (*)(unsigned long long);

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--probe-error") == 0) {
    void* ptr = nullptr;
    const cudaError_t error = cudaMalloc(&ptr, 1 << 20);
    std::printf("cudaMalloc -> %d %s\n", static_cast<int>(error), cudaGetErrorName(error));
    return 0;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  if (argc < 2) {
    std::printf("usage: %s LIMIT_BYTES | --probe-error\n", argv[0]);
    return 2;
  }
  const std::size_t limit = std::strtoull(argv[1], nullptr, 10);
  constexpr std::size_t kMiB = 1 << 20;

  // cudaMalloc: managed, usable from GPU and host.
  std::uint32_t* a = nullptr;
  CHECK_TRUE(cudaMalloc(&a, 64 * kMiB) == cudaSuccess, "cudaMalloc 64 MiB");
  CHECK_TRUE(is_managed(a), "cudaMalloc returned non-managed memory: not intercepted");
  CHECK_TRUE(fill_and_verify(a, 64 * kMiB / 4, 7, nullptr), "kernel write / host read");

  // cudaMemGetInfo answers deepum's view: the limit is the device.
  std::size_t free_bytes = 0, total_bytes = 0;
  CHECK_TRUE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess, "cudaMemGetInfo");
  CHECK_TRUE(total_bytes == limit, "total %zu, expected the limit %zu", total_bytes, limit);
  CHECK_TRUE(free_bytes == limit - 64 * kMiB, "free %zu, expected %zu", free_bytes, limit - 64 * kMiB);

  // cudaMallocPitch: managed, pitch covers the row.
  void* pitched = nullptr;
  std::size_t pitch = 0;
  CHECK_TRUE(cudaMallocPitch(&pitched, &pitch, 1000, 100) == cudaSuccess, "cudaMallocPitch");
  CHECK_TRUE(pitch >= 1000 && pitch % 256 == 0, "pitch %zu", pitch);
  CHECK_TRUE(is_managed(pitched), "cudaMallocPitch not managed");
  CHECK_TRUE(cudaMemset2D(pitched, pitch, 0x5a, 1000, 100) == cudaSuccess, "cudaMemset2D");
  CHECK_TRUE(cudaDeviceSynchronize() == cudaSuccess, "sync");
  CHECK_TRUE(static_cast<unsigned char*>(pitched)[99 * pitch + 999] == 0x5a, "pitched memory content");

  // Stream-ordered allocation and free.
  cudaStream_t stream = nullptr;
  CHECK_TRUE(cudaStreamCreate(&stream) == cudaSuccess, "stream");
  for (int round = 0; round < 20; ++round) {
    std::uint32_t* b = nullptr;
    CHECK_TRUE(cudaMallocAsync(reinterpret_cast<void**>(&b), 8 * kMiB, stream) == cudaSuccess,
               "cudaMallocAsync");
    CHECK_TRUE(round > 0 || is_managed(b), "cudaMallocAsync not managed");
    fill<<<64, 256, 0, stream>>>(b, 8 * kMiB / 4, static_cast<std::uint32_t>(round));
    CHECK_TRUE(cudaFreeAsync(b, stream) == cudaSuccess, "cudaFreeAsync");
  }
  CHECK_TRUE(cudaStreamSynchronize(stream) == cudaSuccess, "stream sync after async frees");

  // Past the limit: the real out-of-memory error, and the program carries on.
  void* too_big = nullptr;
  const cudaError_t over = cudaMalloc(&too_big, limit);
  CHECK_TRUE(over == cudaErrorMemoryAllocation, "over-limit cudaMalloc returned %d", static_cast<int>(over));
  void* small = nullptr;
  CHECK_TRUE(cudaMalloc(&small, kMiB) == cudaSuccess && is_managed(small), "allocation after refusal");

  // Managed memory cannot be shared through IPC: the real error comes back.
  cudaIpcMemHandle_t handle;
  CHECK_TRUE(cudaIpcGetMemHandle(&handle, a) != cudaSuccess, "IPC handle for managed memory must fail");
  cudaGetLastError();

  // A driver entry point fetched through the runtime is deepum's too.
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CHECK_TRUE(cudaGetDriverEntryPointByVersion("cuMemAlloc", &entry, 13000, cudaEnableDefault, &found) ==
                     cudaSuccess &&
                 entry != nullptr,
             "cudaGetDriverEntryPointByVersion(cuMemAlloc)");
  void* free_entry = nullptr;
  cudaGetDriverEntryPointByVersion("cuMemFree", &free_entry, 13000, cudaEnableDefault, &found);
  if (entry != nullptr && free_entry != nullptr) {
    unsigned long long dptr = 0;
    CHECK_TRUE(reinterpret_cast<CuMemAllocFn>(entry)(&dptr, 4 * kMiB) == 0, "cuMemAlloc via entry point");
    CHECK_TRUE(is_managed(reinterpret_cast<void*>(dptr)),
               "cuMemAlloc via cudaGetDriverEntryPoint not managed");
    CHECK_TRUE(reinterpret_cast<CuMemFreeFn>(free_entry)(dptr) == 0, "cuMemFree via entry point");
  }

  // Many threads allocating and freeing at once stay consistent with the limit.
  std::vector<std::thread> threads;
  std::vector<int> thread_failures(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &thread_failures] {
      for (int i = 0; i < 200; ++i) {
        void* p = nullptr;
        if (cudaMalloc(&p, static_cast<std::size_t>(1 + (i % 7)) * kMiB) != cudaSuccess || !is_managed(p) ||
            cudaFree(p) != cudaSuccess) {
          ++thread_failures[static_cast<std::size_t>(t)];
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int failures : thread_failures) CHECK_TRUE(failures == 0, "%d thread allocation failures", failures);

  CHECK_TRUE(cudaFree(a) == cudaSuccess, "free a");
  CHECK_TRUE(cudaFree(pitched) == cudaSuccess, "free pitched");
  CHECK_TRUE(cudaFree(small) == cudaSuccess, "free small");
  CHECK_TRUE(cudaStreamDestroy(stream) == cudaSuccess, "stream destroy");
  // Async frees are released lazily; one more allocation reaps them.
  void* last = nullptr;
  CHECK_TRUE(cudaMalloc(&last, kMiB) == cudaSuccess && cudaFree(last) == cudaSuccess, "reap allocation");
  CHECK_TRUE(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess && free_bytes == limit,
             "free %zu after freeing everything, expected %zu", free_bytes, limit);
  return finish(argv[0]);
}
