// placement_hold_probe: how long a placement (cuMemDiscardAndPrefetchBatchAsync to the GPU) or a
// drop (cuMemDiscardBatchAsync) of one managed array holds its calling thread while other work is
// queued on another stream behind a 20 ms kernel, by kind of work: nothing, a copy into managed
// memory (from device memory, as deepum's staged copies back; from pinned memory), a copy between
// device and pinned memory only, another placement, a kernel writing managed memory; then the same
// kinds of work queued behind a wait for a value in pinned memory (cuStreamWaitValue32) that a host
// thread writes 50 ms later instead of behind the kernel: a call held that long waits for work no
// GPU-visible dependency orders. The calls are issued on an idle stream of their own; the array is
// 256 MiB in 2 MiB blocks.
//
//   placement_hold_probe [MiB]   (default 256 per array, two arrays; keep well under free memory)
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::address;
using bench::Clock;
using bench::cu;
using bench::ms_since;
constexpr unsigned long long kHoldNs = 20'000'000;
constexpr size_t kPiece = size_t{32} << 20;  // deepum's staging buffer

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 256, 8, "placement_hold_probe", &device);
  char *a = nullptr, *b = nullptr, *staging = nullptr, *pinned = nullptr;
  CHECK_CUDA(cudaMallocManaged(&a, bytes));
  CHECK_CUDA(cudaMallocManaged(&b, bytes));
  CHECK_CUDA(cudaMalloc(&staging, kPiece));
  CHECK_CUDA(cudaMallocHost(&pinned, bytes));
  cudaStream_t s1 = nullptr, s2 = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device;
  const auto place = [&](char* array) {
    CUdeviceptr pointer = address(array);
    size_t size = bytes, index = 0;
    CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu, &index, 1, 0, cu(s1)));
  };
  const auto drop = [&](char* array) {
    CUdeviceptr pointer = address(array);
    size_t size = bytes;
    CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, cu(s1)));
  };
  using Queue = std::function<void()>;
  const std::vector<std::pair<const char*, Queue>> beside = {
      {"nothing", [] {}},
      {"device->managed copy",
       [&] { CHECK_CU(cuMemcpyAsync(address(b), address(staging), kPiece, cu(s2))); }},
      {"pinned->managed copy", [&] { CHECK_CU(cuMemcpyHtoDAsync(address(b), pinned, kPiece, cu(s2))); }},
      {"pinned->device copy", [&] { CHECK_CU(cuMemcpyHtoDAsync(address(staging), pinned, kPiece, cu(s2))); }},
      {"managed->device copy",
       [&] { CHECK_CU(cuMemcpyAsync(address(staging), address(b), kPiece, cu(s2))); }},
      {"placement",
       [&] {
         CUdeviceptr pointer = address(b);
         size_t size = bytes, index = 0;
         CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu, &index, 1, 0, cu(s2)));
       }},
      {"kernel device->managed",
       [&] {
         bench::copy_kernel<<<132, 512, 0, s2>>>(reinterpret_cast<const int4*>(staging),
                                                 reinterpret_cast<int4*>(b), kPiece / sizeof(int4));
         CHECK_CUDA(cudaGetLastError());
       }},
  };
  bench::HostGate gate;  // what the second round's work waits for
  std::printf("array %zu MiB; each call on an idle stream, beside another stream's 20 ms kernel and then:\n",
              bytes >> 20);
  // Rounds 0 and 1 behind the kernel (0 warms the driver up), 2 behind the value wait.
  for (int round = 0; round < 3; ++round) {
    const bool behind_value = round == 2;
    if (behind_value) std::printf("the same behind a value a host thread writes 50 ms later:\n");
    for (const auto& [what, queue] : beside) {
      for (const bool placing : {true, false}) {
        CHECK_CUDA(cudaMemsetAsync(a, 1, bytes, s1));  // resident on the GPU
        CHECK_CUDA(cudaMemsetAsync(b, 2, bytes, s2));
        CHECK_CUDA(cudaDeviceSynchronize());
        if (behind_value) {
          gate.hold(cu(s2), std::chrono::milliseconds(50));
        } else {
          bench::spin<<<1, 1, 0, s2>>>(kHoldNs);
        }
        queue();
        const auto start = Clock::now();
        placing ? place(a) : drop(a);
        const double host = ms_since(start);
        gate.join();
        CHECK_CUDA(cudaDeviceSynchronize());
        if (round != 0)
          std::printf("%-10s beside %-24s host %8.3f ms\n", placing ? "placement" : "drop", what, host);
      }
    }
  }
  return 0;
}
