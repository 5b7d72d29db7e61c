// gated_drop_probe: is a drop (cuMemDiscardBatchAsync, a call that holds its caller until the driver
// is done) held by work queued behind a stream memory wait that nothing has satisfied yet? If it
// is, a thread that drops and only afterwards writes the value that work waits for deadlocks; if it
// is not, a program's launches could wait on the GPU for moves not issued yet, their thread free.
// Each case: another stream waits for a value a host thread writes 300 ms later (HostGate), with
// one kind of work queued behind the wait; 20 ms in, a GPU-resident managed array is dropped on an
// idle stream and the call timed. Held: about 280 ms; not held: what a drop alone takes.
//   nothing        the wait alone
//   kernel         a 1 ms kernel
//   d2h copy       device memory to pinned memory, 64 MiB
//   d2h managed    managed memory (GPU-resident) to pinned memory, 64 MiB
//   h2d copy       pinned memory to device memory, 64 MiB
//   placement      a placement on the GPU of discarded managed memory, 64 MiB (the known deadlock)
//
//   gated_drop_probe [MiB]   (the dropped array; default 256)
#include <cuda.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;

constexpr size_t kBeside = size_t{64} << 20;
constexpr auto kGateOpens = std::chrono::milliseconds(300);
constexpr auto kDropAfter = std::chrono::milliseconds(20);

enum class Behind { nothing, kernel, d2h_copy, d2h_managed, h2d_copy, placement };
const char* name(Behind kind) {
  switch (kind) {
    case Behind::nothing:
      return "nothing";
    case Behind::kernel:
      return "kernel";
    case Behind::d2h_copy:
      return "d2h copy";
    case Behind::d2h_managed:
      return "d2h managed";
    case Behind::h2d_copy:
      return "h2d copy";
    case Behind::placement:
      return "placement";
  }
  return "?";
}

struct Setup {
  size_t bytes = 0;
  char* dropped = nullptr;  // managed, dropped in each case
  char* managed = nullptr;  // managed, kBeside: the managed copy's source, the placement's target
  char* device = nullptr;   // device memory, kBeside
  char* pinned = nullptr;   // pinned, kBeside
  cudaStream_t gated = nullptr, drops = nullptr;
};

void make_resident(const Setup& s) {
  for (auto [array, bytes] : {std::pair{s.dropped, s.bytes}, std::pair{s.managed, kBeside}}) {
    CHECK_CUDA(cudaMemPrefetchAsync(array, bytes, bench::device_location(0), 0, s.drops));
    CHECK_CUDA(cudaMemsetAsync(array, 1, bytes, s.drops));
  }
  CHECK_CUDA(cudaStreamSynchronize(s.drops));
}

void enqueue(const Setup& s, Behind kind) {
  switch (kind) {
    case Behind::nothing:
      break;
    case Behind::kernel:
      bench::spin<<<1, 1, 0, s.gated>>>(1000000);
      CHECK_CUDA(cudaGetLastError());
      break;
    case Behind::d2h_copy:
      CHECK_CUDA(cudaMemcpyAsync(s.pinned, s.device, kBeside, cudaMemcpyDeviceToHost, s.gated));
      break;
    case Behind::d2h_managed:
      CHECK_CUDA(cudaMemcpyAsync(s.pinned, s.managed, kBeside, cudaMemcpyDeviceToHost, s.gated));
      break;
    case Behind::h2d_copy:
      CHECK_CUDA(cudaMemcpyAsync(s.device, s.pinned, kBeside, cudaMemcpyHostToDevice, s.gated));
      break;
    case Behind::placement: {
      CUdeviceptr pointer = bench::address(s.managed);
      size_t size = kBeside;
      CUmemLocation gpu = bench::on_gpu(0);
      size_t location_index = 0;
      CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu, &location_index, 1, 0,
                                                 bench::cu(s.gated)));
      break;
    }
  }
}

// The drop's host ms with `kind` queued behind a wait that opens kGateOpens from its start.
double drop_beside_gated(const Setup& s, bench::HostGate& gate, Behind kind) {
  make_resident(s);
  gate.hold(bench::cu(s.gated), kGateOpens);
  enqueue(s, kind);
  std::this_thread::sleep_for(kDropAfter);
  CUdeviceptr pointer = bench::address(s.dropped);
  size_t size = s.bytes;
  const auto start = Clock::now();
  CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, bench::cu(s.drops)));
  CHECK_CUDA(cudaStreamSynchronize(s.drops));
  const double ms = ms_since(start);
  gate.join();
  CHECK_CUDA(cudaStreamSynchronize(s.gated));
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  Setup s;
  s.bytes = bench::requested_bytes(argc, argv, 256, 4, "gated_drop_probe", &device);
  CHECK_CUDA(cudaMallocManaged(&s.dropped, s.bytes));
  CHECK_CUDA(cudaMallocManaged(&s.managed, kBeside));
  CHECK_CUDA(cudaMalloc(&s.device, kBeside));
  CHECK_CUDA(cudaHostAlloc(&s.pinned, kBeside, cudaHostAllocDefault));
  for (cudaStream_t* stream : {&s.gated, &s.drops})
    CHECK_CUDA(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  bench::HostGate gate;
  std::printf("drop of %zu MiB while another stream waits %lld ms for a host-written value\n", s.bytes >> 20,
              static_cast<long long>(kGateOpens.count()));
  std::printf("%-12s %14s %14s\n", "behind wait", "drop call ms", "again ms");
  for (Behind kind : {Behind::nothing, Behind::kernel, Behind::d2h_copy, Behind::d2h_managed,
                      Behind::h2d_copy, Behind::placement}) {
    const double first = drop_beside_gated(s, gate, kind);
    const double again = drop_beside_gated(s, gate, kind);
    std::printf("%-12s %14.2f %14.2f\n", name(kind), first, again);
  }
  return 0;
}
