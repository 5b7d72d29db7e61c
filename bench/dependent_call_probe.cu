// dependent_call_probe: how long each driver call deepum makes holds its calling thread when the
// call's own stream first waits for other work (cuStreamWaitEvent on an event recorded behind a
// 20 ms kernel of another stream, or behind a value a host thread writes 50 ms later) or for
// nothing, from a stream of the program's context and from one of a context of its own (as
// deepum's eviction thread). A call held about as long as that work waits for it on the host:
// whoever issues it is synchronous with the GPU, and a thread that must wait for its issue is too.
// "total" is until the stream is done: behind nothing, the call's own work. The array is managed,
// resident on the GPU, dropped there (as a swap leaves it) or moved to the host before each call;
// copies move one 32 MiB piece (deepum's staging).
//
//   dependent_call_probe [MiB]   (default 64; keep well under free memory)
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::address;
using bench::Clock;
using bench::ms_since;
constexpr unsigned long long kHoldNs = 20'000'000;
constexpr size_t kPiece = size_t{32} << 20;

CUmemLocation location(bool on_gpu, int device) {
  CUmemLocation where{};
  where.type = on_gpu ? CU_MEM_LOCATION_TYPE_DEVICE : CU_MEM_LOCATION_TYPE_HOST;
  where.id = on_gpu ? device : 0;
  return where;
}

void batched_copy(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUmemLocation to_hint,
                  CUmemLocation from_hint, CUstream on) {
  CUmemcpyAttributes attributes{};
  attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
  attributes.srcLocHint = from_hint;
  attributes.dstLocHint = to_hint;
  size_t first = 0;
  CHECK_CU(cuMemcpyBatchAsync(&to, &from, &bytes, 1, &attributes, &first, 1, on));
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes = bench::requested_bytes(argc, argv, 64, 8, "dependent_call_probe", &device);
  if (bytes < kPiece) {
    std::fprintf(stderr, "dependent_call_probe: ask for at least %zu MiB\n", kPiece >> 20);
    return 2;
  }
  char *a = nullptr, *staging = nullptr, *pinned = nullptr;
  CHECK_CUDA(cudaMallocManaged(&a, bytes));
  CHECK_CUDA(cudaMalloc(&staging, kPiece));
  CHECK_CUDA(cudaMallocHost(&pinned, kPiece));
  CUcontext program = nullptr, own = nullptr;
  CHECK_CU(cuCtxGetCurrent(&program));
  cudaStream_t gate_stream = nullptr, program_stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&gate_stream, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&program_stream, cudaStreamNonBlocking));
  CUevent gate_done = nullptr;
  CHECK_CU(cuEventCreate(&gate_done, CU_EVENT_DISABLE_TIMING));
  CUstream own_stream = nullptr;
  CHECK_CU(cuCtxCreate(&own, nullptr, 0, device));
  CHECK_CU(cuStreamCreate(&own_stream, CU_STREAM_NON_BLOCKING));
  CHECK_CU(cuCtxSetCurrent(program));
  bench::HostGate gate;

  const CUmemLocation gpu = location(true, device), host = location(false, device);
  using Call = std::function<void(CUstream)>;
  const std::vector<std::pair<const char*, Call>> calls = {
      {"placement (discard+prefetch)",
       [&](CUstream on) {
         CUdeviceptr pointer = address(a);
         size_t size = bytes, index = 0;
         CUmemLocation where = gpu;
         CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &where, &index, 1, 0, on));
       }},
      {"drop (discard)",
       [&](CUstream on) {
         CUdeviceptr pointer = address(a);
         size_t size = bytes;
         CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, on));
       }},
      {"prefetch to host",
       [&](CUstream on) { CHECK_CU(cuMemPrefetchAsync(address(a), bytes, host, 0, on)); }},
      {"batched copy managed->device",
       [&](CUstream on) { batched_copy(address(staging), address(a), kPiece, gpu, gpu, on); }},
      {"batched copy device->managed",
       [&](CUstream on) { batched_copy(address(a), address(staging), kPiece, gpu, gpu, on); }},
      {"copy managed->device",
       [&](CUstream on) { CHECK_CU(cuMemcpyAsync(address(staging), address(a), kPiece, on)); }},
      {"copy device->managed",
       [&](CUstream on) { CHECK_CU(cuMemcpyAsync(address(a), address(staging), kPiece, on)); }},
      {"batched copy device->pinned",
       [&](CUstream on) { batched_copy(address(pinned), address(staging), kPiece, host, gpu, on); }},
      {"kernel device->managed",
       [&](CUstream on) {
         bench::copy_kernel<<<132, 512, 0, reinterpret_cast<cudaStream_t>(on)>>>(
             reinterpret_cast<const int4*>(staging), reinterpret_cast<int4*>(a), kPiece / sizeof(int4));
         CHECK_CUDA(cudaGetLastError());
       }},
  };
  // Where the array is before each call: resident on the GPU, dropped there (as a swap leaves it),
  // or moved to the host.
  const char* const states[] = {"resident", "dropped", "on host"};
  const char* const behind_names[] = {"nothing", "kernel (20 ms)", "value (50 ms)"};
  const auto prepare = [&](char* array, int state) {
    CUdeviceptr pointer = address(array);
    size_t size = bytes;
    if (state == 1) CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, bench::cu(program_stream)));
    if (state == 2) CHECK_CU(cuMemPrefetchAsync(pointer, size, host, 0, bench::cu(program_stream)));
  };
  std::printf("array %zu MiB; each call on a stream that first waits for an event behind other work\n",
              bytes >> 20);
  std::printf("%-30s %-8s %-9s %-14s %10s %10s\n", "call", "context", "array", "behind", "host ms",
              "total ms");
  // Round 0 warms the driver up and is not printed.
  for (int round = 0; round < 2; ++round) {
    for (const int state : {0, 1, 2})
      for (const int behind : {0, 1, 2}) {
        if (state != 0 && behind == 2) continue;
        const bool behind_value = behind == 2;
        for (const bool own_context : {false, true}) {
          for (const auto& [what, call] : calls) {
            if (own_context && std::strncmp(what, "kernel", 6) == 0) continue;  // its module is the program's
            CHECK_CUDA(cudaMemsetAsync(a, 1, bytes, program_stream));           // resident on the GPU
            prepare(a, state);
            CHECK_CUDA(cudaDeviceSynchronize());
            if (behind_value) {
              gate.hold(bench::cu(gate_stream), std::chrono::milliseconds(50));
            } else if (behind == 1) {
              bench::spin<<<1, 1, 0, gate_stream>>>(kHoldNs);
            }
            CHECK_CU(cuEventRecord(gate_done, bench::cu(gate_stream)));
            const auto start = Clock::now();
            CUstream on = bench::cu(program_stream);
            if (own_context) {
              CHECK_CU(cuCtxSetCurrent(own));
              on = own_stream;
            }
            CHECK_CU(cuStreamWaitEvent(on, gate_done, 0));
            const auto issued = Clock::now();
            call(on);
            const double held = ms_since(issued);
            CHECK_CU(cuStreamSynchronize(on));
            const double total = ms_since(start);
            if (own_context) CHECK_CU(cuCtxSetCurrent(program));
            gate.join();
            CHECK_CUDA(cudaDeviceSynchronize());
            if (round == 1)
              std::printf("%-30s %-8s %-9s %-14s %10.3f %10.3f\n", what, own_context ? "own" : "program",
                          states[state], behind_names[behind], held, total);
          }
        }
      }
  }
  return 0;
}
