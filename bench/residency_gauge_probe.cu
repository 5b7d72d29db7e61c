// residency_gauge_probe: does the driver's free-memory figure (cudaMemGetInfo) follow managed memory
// as it moves on and off the GPU, at what granularity, how soon, and at what cost? deepum's residency
// limit needs a measure that does not wait for CUPTI's fault records (0.1-1 s late).
//
//   residency_gauge_probe [MiB]   (default 1024; two ranges of this size, each at most a quarter of
//                                  the GPU's free memory)
//
// Prints, per step, how much the GPU's used memory grew since the start (MiB); then a demand-fault
// pass and an eviction sampled by polling cudaMemGetInfo, and the cost of one call. Runs natively.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "managed_bench.hpp"

namespace {

using Clock = std::chrono::steady_clock;

__global__ void write_fill(float4* data, size_t count, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < count;
       i += size_t{gridDim.x} * blockDim.x) {
    data[i] = make_float4(value, value, value, value);
  }
}

// One 4-byte write every `stride` bytes.
__global__ void touch_every(char* data, size_t bytes, size_t stride) {
  for (size_t i = (blockIdx.x * size_t{blockDim.x} + threadIdx.x) * stride; i < bytes;
       i += size_t{gridDim.x} * blockDim.x * stride) {
    *reinterpret_cast<int*>(data + i) = 1;
  }
}

size_t free_now() {
  size_t free_bytes = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total));
  return free_bytes;
}

struct Sample {
  double ms;
  double used_mib;
};

// Polls free memory until `done` completes; samples of growth since `base_free` over time.
std::vector<Sample> poll_until(cudaEvent_t done, size_t base_free) {
  std::vector<Sample> samples;
  const auto start = Clock::now();
  cudaError_t state;
  while ((state = cudaEventQuery(done)) == cudaErrorNotReady) {
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    const double used = (static_cast<double>(base_free) - static_cast<double>(free_now())) / (1 << 20);
    samples.push_back({ms, used});
  }
  CHECK_CUDA(state);  // the kernel or copy it waited for failed
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  samples.push_back({ms, (static_cast<double>(base_free) - static_cast<double>(free_now())) / (1 << 20)});
  return samples;
}

void print_series(const char* name, const std::vector<Sample>& s) {
  // The shape in ten points: when the used figure first reached each tenth of its final value.
  const double last = s.back().used_mib;
  std::printf(
      "  \"%s\": {\"samples\": %zu, \"elapsed_ms\": %.2f, \"first_mib\": %.1f, \"final_mib\": %.1f, "
      "\"ms_to_reach_tenths\": [",
      name, s.size(), s.back().ms, s.front().used_mib, last);
  const double first = s.front().used_mib;
  for (int tenth = 1; tenth <= 10; ++tenth) {
    const double target = first + (last - first) * tenth / 10.0;
    double at = -1;
    for (const Sample& x : s) {
      if ((last >= first && x.used_mib >= target) || (last < first && x.used_mib <= target)) {
        at = x.ms;
        break;
      }
    }
    std::printf("%s%.2f", tenth > 1 ? ", " : "", at);
  }
  std::printf("]},\n");
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 1024, 4, "residency_gauge_probe", &device);
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  const int grid = prop.multiProcessorCount * 8;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaFree(nullptr));
  const size_t base = free_now();
  auto used_mib = [&] { return (static_cast<double>(base) - static_cast<double>(free_now())) / (1 << 20); };
  auto sync = [&] { CHECK_CUDA(cudaStreamSynchronize(stream)); };

  std::printf("{\"device\": \"%s\", \"mib\": %zu,\n", prop.name, bytes >> 20);
  char* data = nullptr;
  CHECK_CUDA(cudaMallocManaged(&data, bytes));
  std::printf("  \"after_alloc_mib\": %.1f,\n", used_mib());
  CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, bench::device_location(device), 0, stream));
  sync();
  std::printf("  \"after_prefetch_to_gpu_mib\": %.1f,\n", used_mib());
  CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, bench::host_location(), 0, stream));
  sync();
  std::printf("  \"after_prefetch_to_host_mib\": %.1f,\n", used_mib());
  const size_t strides[] = {size_t{2} << 20, size_t{64} << 10, size_t{4} << 10};
  for (size_t stride : strides) {
    touch_every<<<grid, 256, 0, stream>>>(data, bytes, stride);
    CHECK_CUDA(cudaGetLastError());
    sync();
    std::printf("  \"after_gpu_touch_every_%zu_kib_mib\": %.1f,\n", stride >> 10, used_mib());
  }
  CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, bench::host_location(), 0, stream));
  sync();
  std::printf("  \"after_second_prefetch_to_host_mib\": %.1f,\n", used_mib());

  // A demand-fault pass (plain UM) and an eviction, each polled while it runs.
  cudaEvent_t done;
  CHECK_CUDA(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  write_fill<<<grid, 512, 0, stream>>>(reinterpret_cast<float4*>(data), bytes / sizeof(float4), 3.0f);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(done, stream));
  const std::vector<Sample> faulting = poll_until(done, base);
  print_series("demand_fault_pass_of_evicted_range", faulting);
  CHECK_CUDA(cudaMemPrefetchAsync(data, bytes, bench::host_location(), 0, stream));
  CHECK_CUDA(cudaEventRecord(done, stream));
  print_series("eviction_to_host", poll_until(done, base));
  // Does the driver reuse the GPU memory it freed by evicting, for another range's pages? Placed
  // on the host first (as deepum does under a resident limit), then faulted in, polled.
  char* other = nullptr;
  CHECK_CUDA(cudaMallocManaged(&other, bytes));
  std::memset(other, 0, bytes);
  const double before_other = used_mib();
  write_fill<<<grid, 512, 0, stream>>>(reinterpret_cast<float4*>(other), bytes / sizeof(float4), 4.0f);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(done, stream));
  print_series("demand_fault_pass_of_another_range", poll_until(done, base));
  std::printf("  \"before_other_range_mib\": %.1f, \"after_other_range_faulted_in_mib\": %.1f,\n",
              before_other, used_mib());
  CHECK_CUDA(cudaFree(other));
  std::printf("  \"after_other_range_freed_mib\": %.1f,\n", used_mib());

  // The cost of one call, idle and while a kernel faults.
  constexpr int kCalls = 2000;
  auto start = Clock::now();
  for (int i = 0; i < kCalls; ++i) free_now();
  const double idle_us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kCalls;
  std::vector<double> gaps;
  for (size_t i = 1; i < faulting.size(); ++i) gaps.push_back(faulting[i].ms - faulting[i - 1].ms);
  std::sort(gaps.begin(), gaps.end());
  const double busy_p50 = gaps.empty() ? 0 : gaps[gaps.size() / 2] * 1e3;
  const double busy_max = gaps.empty() ? 0 : gaps.back() * 1e3;
  // While faulting, one poll of poll_until: cudaMemGetInfo and cudaEventQuery.
  std::printf(
      "  \"mem_get_info_idle_us\": %.2f, \"poll_while_faulting_p50_us\": %.2f, "
      "\"poll_while_faulting_max_us\": %.2f,\n",
      idle_us, busy_p50, busy_max);
  CHECK_CUDA(cudaFree(data));
  std::printf("  \"after_free_mib\": %.1f}\n", used_mib());
  CHECK_CUDA(cudaEventDestroy(done));
  CHECK_CUDA(cudaStreamDestroy(stream));
  return 0;
}
