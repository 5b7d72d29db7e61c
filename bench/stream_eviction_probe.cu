// stream_eviction_probe: is an eviction (a prefetch to the host) ordered in a stream after an
// event of the program's stream carried out when the GPU gets there, or when it is called? deepum's
// evictions before launches rely on the first. A read kernel is timed after each way of evicting:
// fast means the buffer was still resident, slow means it faulted back from the host. The last way
// is the alternative: a host thread issues the eviction once the event is reached, and the
// program's stream waits for a value the eviction's stream writes after it (stream memory ops).
//
//   stream_eviction_probe [MiB]   (default 256; at most a quarter of the GPU's free memory)
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "managed_bench.hpp"

namespace {

__global__ void touch(float* data, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    data[i] = value;
}

__global__ void read_sum(const float* data, size_t count, float* out) {
  float sum = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x)
    sum += data[i];
  if (sum == -1.0f) *out = sum;  // never true; keeps the loads
}

// Keeps the GPU busy for about `ms` milliseconds, so that work queued after it is queued early.
__global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

struct Probe {
  float* data = nullptr;
  size_t count = 0;
  float* out = nullptr;
  cudaStream_t ours = nullptr;
  cudaEvent_t program_done = nullptr, evict_done = nullptr, start = nullptr, stop = nullptr;
  long long spin_cycles = 0;

  // Times read_sum on `stream` (its start event after everything queued there so far).
  float timed_read(cudaStream_t stream) {
    CHECK_CUDA(cudaEventRecord(start, stream));
    read_sum<<<1024, 256, 0, stream>>>(data, count, out);
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return ms;
  }
  void make_resident(cudaStream_t stream) {
    touch<<<1024, 256, 0, stream>>>(data, count, 1.0f);
    CHECK_CUDA(cudaStreamSynchronize(stream));
  }
  // The eviction as deepum orders it: after the program's stream's work so far, and the program's
  // stream waits for its end.
  void ordered_eviction(cudaStream_t stream) {
    CHECK_CUDA(cudaEventRecord(program_done, stream));
    CHECK_CUDA(cudaStreamWaitEvent(ours, program_done, 0));
    CHECK_CUDA(cudaMemPrefetchAsync(data, count * sizeof(float), bench::host_location(), 0, ours));
    CHECK_CUDA(cudaEventRecord(evict_done, ours));
    CHECK_CUDA(cudaStreamWaitEvent(stream, evict_done, 0));
  }
};

using WaitValue = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WriteValue = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

template <typename Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status{};
  CHECK_CUDA(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status));
  if (fn == nullptr) {
    std::fprintf(stderr, "no %s in the driver\n", name);
    std::exit(1);
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 256, 4, "stream_eviction_probe", &device);
  Probe p;
  p.count = bytes / sizeof(float);
  CHECK_CUDA(cudaMallocManaged(&p.data, bytes));
  CHECK_CUDA(cudaMalloc(&p.out, sizeof(float)));
  CHECK_CUDA(cudaStreamCreateWithFlags(&p.ours, cudaStreamNonBlocking));
  for (cudaEvent_t* event : {&p.program_done, &p.evict_done})
    CHECK_CUDA(cudaEventCreateWithFlags(event, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventCreate(&p.start));
  CHECK_CUDA(cudaEventCreate(&p.stop));
  int clock_khz = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  p.spin_cycles = static_cast<long long>(clock_khz) * 200;  // ~200 ms
  cudaStream_t created = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&created, cudaStreamNonBlocking));

  std::printf("buffer %zu MiB; read kernel ms (fast: resident, slow: faulted back)\n", bytes >> 20);
  for (int round = 0; round < 2; ++round) {
    p.make_resident(nullptr);
    std::printf("resident                                      %8.2f\n", p.timed_read(nullptr));
    p.make_resident(nullptr);
    CHECK_CUDA(cudaMemPrefetchAsync(p.data, bytes, bench::host_location(), 0, p.ours));
    CHECK_CUDA(cudaStreamSynchronize(p.ours));
    std::printf("evicted, host waited                          %8.2f\n", p.timed_read(nullptr));
    for (cudaStream_t stream : {static_cast<cudaStream_t>(nullptr), created}) {
      const char* name = stream == nullptr ? "legacy stream " : "created stream";
      p.make_resident(stream);
      p.ordered_eviction(stream);
      std::printf("ordered eviction, %s, GPU idle           %8.2f\n", name, p.timed_read(stream));
      // The host far ahead of the GPU, as in training: the eviction is called 200 ms before the
      // GPU reaches it, and the buffer is faulted in by a kernel queued before it.
      CHECK_CUDA(cudaMemPrefetchAsync(p.data, bytes, bench::host_location(), 0, p.ours));
      CHECK_CUDA(cudaStreamSynchronize(p.ours));
      spin<<<1, 1, 0, stream>>>(p.spin_cycles);
      touch<<<1024, 256, 0, stream>>>(p.data, p.count, 2.0f);
      p.ordered_eviction(stream);
      std::printf("ordered eviction, %s, GPU 200 ms behind  %8.2f\n", name, p.timed_read(stream));
    }
  }
  // The host thread's way: the GPU 200 ms behind again; the program's stream waits for the value.
  const auto wait_value = driver_function<WaitValue>("cuStreamWaitValue32");
  const auto write_value = driver_function<WriteValue>("cuStreamWriteValue32");
  std::uint32_t* flag = nullptr;
  CHECK_CUDA(cudaMalloc(&flag, sizeof(std::uint32_t)));
  CHECK_CUDA(cudaMemset(flag, 0, sizeof(std::uint32_t)));
  CHECK_CUDA(cudaDeviceSynchronize());
  const auto flag_address = reinterpret_cast<CUdeviceptr>(flag);
  for (std::uint32_t round = 1; round <= 2; ++round) {
    for (cudaStream_t stream : {static_cast<cudaStream_t>(nullptr), created}) {
      const char* name = stream == nullptr ? "legacy stream " : "created stream";
      CHECK_CUDA(cudaMemPrefetchAsync(p.data, bytes, bench::host_location(), 0, p.ours));
      CHECK_CUDA(cudaStreamSynchronize(p.ours));
      static std::uint32_t sequence = 0;
      ++sequence;
      spin<<<1, 1, 0, stream>>>(p.spin_cycles);
      touch<<<1024, 256, 0, stream>>>(p.data, p.count, 3.0f);
      CHECK_CUDA(cudaEventRecord(p.program_done, stream));
      if (wait_value(stream, flag_address, sequence, CU_STREAM_WAIT_VALUE_GEQ) != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuStreamWaitValue32 failed\n");
        return 1;
      }
      CHECK_CUDA(cudaEventRecord(p.start, stream));
      read_sum<<<1024, 256, 0, stream>>>(p.data, p.count, p.out);
      CHECK_CUDA(cudaEventRecord(p.stop, stream));
      // The host thread: once the GPU is there, evict, then release the program's stream.
      CHECK_CUDA(cudaEventSynchronize(p.program_done));
      CHECK_CUDA(cudaMemPrefetchAsync(p.data, bytes, bench::host_location(), 0, p.ours));
      if (write_value(p.ours, flag_address, sequence, 0) != CUDA_SUCCESS) {
        std::fprintf(stderr, "cuStreamWriteValue32 failed\n");
        return 1;
      }
      CHECK_CUDA(cudaEventSynchronize(p.stop));
      float ms = 0;
      CHECK_CUDA(cudaEventElapsedTime(&ms, p.start, p.stop));
      std::printf("host-issued eviction, %s, value waited   %8.2f\n", name, ms);
    }
  }
  CHECK_CUDA(cudaFree(p.data));
  return 0;
}
