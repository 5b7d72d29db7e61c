// Integration test program for the driver API alone (linked to libcuda, no cudart). Run under
// libdeepum.so with DEEPUM_ALLOC_LIMIT = argv[1] bytes. Reaches the driver's allocation functions
// the three ways programs do: direct calls, cuGetProcAddress, and dlsym on libcuda.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "check.hpp"

namespace {

bool is_managed(CUdeviceptr ptr) {
  unsigned int managed = 0;
  return cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, ptr) == CUDA_SUCCESS &&
         managed == 1;
}

bool memset_and_verify(CUdeviceptr ptr, std::size_t words, unsigned int value) {
  if (cuMemsetD32(ptr, value, words) != CUDA_SUCCESS || cuCtxSynchronize() != CUDA_SUCCESS) return false;
  std::vector<unsigned int> host(words);
  if (cuMemcpyDtoH(host.data(), ptr, words * 4) != CUDA_SUCCESS) return false;
  for (unsigned int word : host) {
    if (word != value) return false;
  }
  // Managed memory is readable from the host directly.
  return reinterpret_cast<const unsigned int*>(ptr)[words - 1] == value;
}

using MemAllocFn = CUresult (*)(CUdeviceptr*, std::size_t);
using MemFreeFn = CUresult (*)(CUdeviceptr);
using MemAllocAsyncFn = CUresult (*)(CUdeviceptr*, std::size_t, CUstream);
using MemFreeAsyncFn = CUresult (*)(CUdeviceptr, CUstream);

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  if (argc < 2) {
    std::printf("usage: %s LIMIT_BYTES\n", argv[0]);
    return 2;
  }
  const std::size_t limit = std::strtoull(argv[1], nullptr, 10);
  constexpr std::size_t kMiB = 1 << 20;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CHECK_TRUE(cuDeviceGet(&device, 0) == CUDA_SUCCESS, "cuDeviceGet");
  CHECK_TRUE(cuDevicePrimaryCtxRetain(&context, device) == CUDA_SUCCESS, "primary context");
  CHECK_TRUE(cuCtxSetCurrent(context) == CUDA_SUCCESS, "cuCtxSetCurrent");

  // Direct calls.
  CUdeviceptr a = 0;
  CHECK_TRUE(cuMemAlloc(&a, 32 * kMiB) == CUDA_SUCCESS, "cuMemAlloc");
  CHECK_TRUE(is_managed(a), "cuMemAlloc returned non-managed memory: not intercepted");
  CHECK_TRUE(memset_and_verify(a, 32 * kMiB / 4, 0xabcd1234u), "memset / copy back / host read");
  std::size_t free_bytes = 0, total_bytes = 0;
  CHECK_TRUE(cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS, "cuMemGetInfo");
  CHECK_TRUE(total_bytes == limit && free_bytes == limit - 32 * kMiB, "cuMemGetInfo %zu/%zu", free_bytes,
             total_bytes);

  CUdeviceptr pitched = 0;
  std::size_t pitch = 0;
  CHECK_TRUE(cuMemAllocPitch(&pitched, &pitch, 1000, 64, 4) == CUDA_SUCCESS, "cuMemAllocPitch");
  CHECK_TRUE(pitch >= 1000 && is_managed(pitched), "cuMemAllocPitch pitch %zu / managed", pitch);

  CUstream stream = nullptr;
  CHECK_TRUE(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS, "cuStreamCreate");
  for (int round = 0; round < 10; ++round) {
    CUdeviceptr b = 0;
    CHECK_TRUE(cuMemAllocAsync(&b, 4 * kMiB, stream) == CUDA_SUCCESS, "cuMemAllocAsync");
    CHECK_TRUE(is_managed(b), "cuMemAllocAsync not managed");
    CHECK_TRUE(cuMemsetD32Async(b, 1u, 4 * kMiB / 4, stream) == CUDA_SUCCESS, "memset async");
    CHECK_TRUE(cuMemFreeAsync(b, stream) == CUDA_SUCCESS, "cuMemFreeAsync");
  }
  CHECK_TRUE(cuStreamSynchronize(stream) == CUDA_SUCCESS, "stream sync");

  // Past the limit.
  CUdeviceptr too_big = 0;
  CHECK_TRUE(cuMemAlloc(&too_big, limit) == CUDA_ERROR_OUT_OF_MEMORY, "over-limit cuMemAlloc");

  CUipcMemHandle handle;
  CHECK_TRUE(cuIpcGetMemHandle(&handle, a) != CUDA_SUCCESS, "IPC handle for managed memory must fail");

  // cuGetProcAddress, legacy and per-thread stream variants.
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  CHECK_TRUE(cuGetProcAddress("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status) == CUDA_SUCCESS,
             "cuGetProcAddress(cuMemAlloc)");
  void* free_fn = nullptr;
  cuGetProcAddress("cuMemFree", &free_fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
  CUdeviceptr c = 0;
  CHECK_TRUE(fn && reinterpret_cast<MemAllocFn>(fn)(&c, 2 * kMiB) == CUDA_SUCCESS && is_managed(c),
             "cuMemAlloc via cuGetProcAddress not managed");
  CHECK_TRUE(free_fn && reinterpret_cast<MemFreeFn>(free_fn)(c) == CUDA_SUCCESS,
             "cuMemFree via cuGetProcAddress");
  void* async_fn = nullptr;
  void* free_async_fn = nullptr;
  cuGetProcAddress("cuMemAllocAsync", &async_fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                   &status);
  cuGetProcAddress("cuMemFreeAsync", &free_async_fn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                   &status);
  CUdeviceptr d = 0;
  CHECK_TRUE(async_fn && reinterpret_cast<MemAllocAsyncFn>(async_fn)(&d, 2 * kMiB, nullptr) == CUDA_SUCCESS &&
                 is_managed(d),
             "per-thread cuMemAllocAsync via cuGetProcAddress not managed");
  CHECK_TRUE(free_async_fn && reinterpret_cast<MemFreeAsyncFn>(free_async_fn)(d, nullptr) == CUDA_SUCCESS,
             "per-thread cuMemFreeAsync");
  // An old version asks for the 32-bit v1 function, which deepum must leave alone.
  void* v1 = nullptr;
  CHECK_TRUE(
      cuGetProcAddress("cuMemAlloc", &v1, 3010, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS ||
          v1 != fn,
      "cuMemAlloc v1 must not be replaced by the v2 interposer");

  // dlsym on libcuda, as cudart does.
  void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  CHECK_TRUE(libcuda != nullptr, "libcuda handle");
  if (libcuda != nullptr) {
    auto alloc = reinterpret_cast<MemAllocFn>(dlsym(libcuda, "cuMemAlloc_v2"));
    auto release = reinterpret_cast<MemFreeFn>(dlsym(libcuda, "cuMemFree_v2"));
    CUdeviceptr e = 0;
    CHECK_TRUE(alloc && alloc(&e, 2 * kMiB) == CUDA_SUCCESS && is_managed(e),
               "cuMemAlloc_v2 via dlsym not managed");
    CHECK_TRUE(release && release(e) == CUDA_SUCCESS, "cuMemFree_v2 via dlsym");
  }

  CHECK_TRUE(cuMemFree(a) == CUDA_SUCCESS, "free a");
  CHECK_TRUE(cuMemFree(pitched) == CUDA_SUCCESS, "free pitched");
  CHECK_TRUE(cuStreamDestroy(stream) == CUDA_SUCCESS, "stream destroy");
  CHECK_TRUE(cuMemGetInfo(&free_bytes, &total_bytes) == CUDA_SUCCESS && free_bytes == limit,
             "free %zu at the end, expected %zu", free_bytes, limit);
  cuDevicePrimaryCtxRelease(device);
  return finish(argv[0]);
}
