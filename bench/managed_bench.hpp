// What the benchmark programs share: checked CUDA calls, memory locations, and a managed buffer of
// the size asked on the command line, refused when it is more than a share of the GPU's free memory
// (the safety rule of the GPU machine: never ask for managed memory the card does not have free).
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#define CHECK_CUDA(call)                                                                         \
  do {                                                                                           \
    cudaError_t e = (call);                                                                      \
    if (e != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e)); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

// The same for a driver call (the programs that use it link libcuda).
#define CHECK_CU(call)                                                          \
  do {                                                                          \
    CUresult r = (call);                                                        \
    if (r != CUDA_SUCCESS) {                                                    \
      const char* text = nullptr;                                               \
      cuGetErrorString(r, &text);                                               \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, text); \
      std::exit(1);                                                             \
    }                                                                           \
  } while (0)

namespace bench {

// Spins for `ns` nanoseconds of the GPU's clock: holds back what waits for its stream.
static __global__ void spin(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// Copies `count` 16-byte words with a grid-stride loop: a kernel writing (or reading) managed memory.
static __global__ void copy_kernel(const int4* from, int4* to, size_t count) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    to[i] = from[i];
}

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

inline CUdeviceptr address(const void* pointer) { return reinterpret_cast<CUdeviceptr>(pointer); }
inline CUstream cu(cudaStream_t stream) { return reinterpret_cast<CUstream>(stream); }

// A value in mapped pinned memory that a stream waits for on the GPU (cuStreamWaitValue32) and a
// host thread writes `after` later: work queued behind it waits for nothing the GPU can see.
class HostGate {
 public:
  HostGate() {
    CHECK_CUDA(cudaHostAlloc(&value_, sizeof(unsigned), cudaHostAllocMapped));
    CHECK_CU(cuMemHostGetDevicePointer(&on_gpu_, value_, 0));
  }
  ~HostGate() { join(); }
  HostGate(const HostGate&) = delete;
  HostGate& operator=(const HostGate&) = delete;
  // `stream` waits until the host writes the value, `after` from now.
  void hold(CUstream stream, std::chrono::milliseconds after) {
    join();
    *reinterpret_cast<volatile unsigned*>(value_) = 0;
    CHECK_CU(cuStreamWaitValue32(stream, on_gpu_, 1, CU_STREAM_WAIT_VALUE_GEQ));
    writer_ = std::thread([value = value_, after] {
      std::this_thread::sleep_for(after);
      *reinterpret_cast<volatile unsigned*>(value) = 1;
    });
  }
  void join() {
    if (writer_.joinable()) writer_.join();
  }

 private:
  unsigned* value_ = nullptr;
  CUdeviceptr on_gpu_ = 0;
  std::thread writer_;
};

inline cudaMemLocation device_location(int device) {
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeDevice;
  location.id = device;
  return location;
}

inline cudaMemLocation host_location() {
  cudaMemLocation location{};
  location.type = cudaMemLocationTypeHost;
  return location;
}

inline CUmemLocation on_gpu(CUdevice device) {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = device;
  return where;
}

inline CUmemLocation on_host() {
  CUmemLocation where{};
  where.type = CU_MEM_LOCATION_TYPE_HOST;
  return where;
}

// One batched call of `bytes`-sized copies in stream order, the operands' locations hinted (a
// location of type 0: no hint), as deepum makes its copies.
inline void batched_copies(std::vector<CUdeviceptr>& dsts, std::vector<CUdeviceptr>& srcs, CUmemLocation from,
                           CUmemLocation to, size_t bytes, CUstream stream) {
  std::vector<size_t> sizes(dsts.size(), bytes);
  CUmemcpyAttributes attributes{};
  attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attributes.srcLocHint = from;
  attributes.dstLocHint = to;
  size_t first = 0;
  CHECK_CU(cuMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), sizes.size(), &attributes, &first, 1,
                              stream));
}

// argv[1] MiB (or default_mib) as bytes, with the current device; exits with 2 and a message when
// that is more than free memory / max_share_divisor.
inline size_t requested_bytes(int argc, char** argv, size_t default_mib, size_t max_share_divisor,
                              const char* program, int* device) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : default_mib;
  CHECK_CUDA(cudaGetDevice(device));
  size_t free_bytes = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if ((mib << 20) > free_bytes / max_share_divisor) {
    std::fprintf(stderr, "%s: %zu MiB is more than 1/%zu of the free %zu MiB; ask for less\n", program, mib,
                 max_share_divisor, free_bytes >> 20);
    std::exit(2);
  }
  return mib << 20;
}

}  // namespace bench
