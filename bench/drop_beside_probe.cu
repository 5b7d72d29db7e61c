// drop_beside_probe: how long a drop (cuMemDiscardBatchAsync of GPU-resident managed memory) and a
// placement (cuMemDiscardAndPrefetchBatchAsync of the same memory to the GPU) hold their caller
// while other work runs beside them in another stream, by kind of work:
//   none          nothing beside
//   h2d copy      cudaMemcpyAsync pinned -> device memory (a copy engine, the way deepum's copies
//                 back into its staging area go)
//   h2d kernel    a kernel reading mapped pinned memory into device memory (the SMs pull over the
//                 link; no copy engine)
//   d2h copy      cudaMemcpyAsync device memory -> pinned (the swaps' copies out)
//   d2h kernel    a kernel writing device memory into mapped pinned memory
//   managed write a kernel copying device memory into other managed memory (deepum's copy within
//                 the GPU of a copy back)
// and the rate of each kind alone and beside a copy the other way running at once. A drop or
// placement that waits for copies but not for kernels would let copies run as kernels beside them.
//
//   drop_beside_probe [MiB]   (the work beside moves 4x this; default 256, four drops per kind)
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;

struct Setup {
  size_t bytes = 0;            // the dropped array
  size_t beside = 0;           // what the work beside moves
  char* dropped = nullptr;     // managed
  char* written = nullptr;     // managed, the managed-write kind's target
  char* pinned = nullptr;      // mapped pinned, `beside` bytes
  char* device = nullptr;      // device memory, `beside` bytes
  char* pinned_out = nullptr;  // mapped pinned, `beside` bytes
  char* device_out = nullptr;
  cudaStream_t drops = nullptr, work = nullptr, other = nullptr;
};

enum class Beside { none, h2d_copy, h2d_kernel, d2h_copy, d2h_kernel, managed_write };
const char* name(Beside kind) {
  switch (kind) {
    case Beside::none:
      return "none";
    case Beside::h2d_copy:
      return "h2d copy";
    case Beside::h2d_kernel:
      return "h2d kernel";
    case Beside::d2h_copy:
      return "d2h copy";
    case Beside::d2h_kernel:
      return "d2h kernel";
    case Beside::managed_write:
      return "managed write";
  }
  return "?";
}

void copy_by_kernel(const void* from, void* to, size_t bytes, cudaStream_t stream) {
  bench::copy_kernel<<<132 * 8, 512, 0, stream>>>(static_cast<const int4*>(from), static_cast<int4*>(to),
                                                  bytes / sizeof(int4));
  CHECK_CUDA(cudaGetLastError());
}

void enqueue(const Setup& s, Beside kind, cudaStream_t stream) {
  switch (kind) {
    case Beside::none:
      break;
    case Beside::h2d_copy:
      CHECK_CUDA(cudaMemcpyAsync(s.device, s.pinned, s.beside, cudaMemcpyHostToDevice, stream));
      break;
    case Beside::h2d_kernel:
      copy_by_kernel(s.pinned, s.device, s.beside, stream);
      break;
    case Beside::d2h_copy:
      CHECK_CUDA(cudaMemcpyAsync(s.pinned_out, s.device_out, s.beside, cudaMemcpyDeviceToHost, stream));
      break;
    case Beside::d2h_kernel:
      copy_by_kernel(s.device_out, s.pinned_out, s.beside, stream);
      break;
    case Beside::managed_write:
      copy_by_kernel(s.device, s.written, s.bytes, stream);
      break;
  }
}

// The array resident on the GPU again, its pages written there.
void make_resident(const Setup& s) {
  cudaMemLocation gpu{};
  gpu.type = cudaMemLocationTypeDevice;
  gpu.id = 0;
  CHECK_CUDA(cudaMemPrefetchAsync(s.dropped, s.bytes, gpu, 0, s.drops));
  CHECK_CUDA(cudaMemsetAsync(s.dropped, 1, s.bytes, s.drops));
  CHECK_CUDA(cudaStreamSynchronize(s.drops));
}

// The call's host time, and the call plus the host's wait for it, with `kind` running beside: a
// drop of the resident array, or (`place`) its placement on the GPU once dropped.
void held_beside(const Setup& s, Beside kind, bool place, double& call_ms, double& total_ms) {
  make_resident(s);
  CUdeviceptr pointer = bench::address(s.dropped);
  size_t size = s.bytes;
  if (place) {
    CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, bench::cu(s.drops)));
    CHECK_CUDA(cudaStreamSynchronize(s.drops));
  }
  enqueue(s, kind, s.work);
  bench::spin<<<1, 1, 0, s.drops>>>(200000);  // the work beside has begun before the call
  CHECK_CUDA(cudaStreamSynchronize(s.drops));
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = 0;
  size_t location_index = 0;
  const auto start = Clock::now();
  if (place) {
    CHECK_CU(cuMemDiscardAndPrefetchBatchAsync(&pointer, &size, 1, &gpu, &location_index, 1, 0,
                                               bench::cu(s.drops)));
  } else {
    CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, bench::cu(s.drops)));
  }
  call_ms += ms_since(start);
  CHECK_CUDA(cudaStreamSynchronize(s.drops));
  total_ms += ms_since(start);
  CHECK_CUDA(cudaStreamSynchronize(s.work));
}

// GB/s of `kind` alone, or beside a copy the other way of the same size on another stream.
double rate(const Setup& s, Beside kind, bool beside_other_way) {
  cudaEvent_t begin, end;
  CHECK_CUDA(cudaEventCreate(&begin));
  CHECK_CUDA(cudaEventCreate(&end));
  CHECK_CUDA(cudaDeviceSynchronize());
  const bool way_out = kind == Beside::d2h_copy || kind == Beside::d2h_kernel;
  if (beside_other_way) enqueue(s, way_out ? Beside::h2d_copy : Beside::d2h_copy, s.other);
  CHECK_CUDA(cudaEventRecord(begin, s.work));
  enqueue(s, kind, s.work);
  CHECK_CUDA(cudaEventRecord(end, s.work));
  CHECK_CUDA(cudaDeviceSynchronize());
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, begin, end));
  CHECK_CUDA(cudaEventDestroy(begin));
  CHECK_CUDA(cudaEventDestroy(end));
  const size_t moved = kind == Beside::managed_write ? s.bytes : s.beside;
  return static_cast<double>(moved) / (ms * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  Setup s;
  s.bytes = mib << 20;
  s.beside = 4 * s.bytes;
  size_t free_bytes = 0, total = 0;
  CHECK_CUDA(cudaMemGetInfo(&free_bytes, &total));
  if (2 * s.bytes + 2 * s.beside > free_bytes / 2) {
    std::fprintf(stderr, "drop_beside_probe: %zu MiB asks too much of %zu MiB free\n", mib, free_bytes >> 20);
    return 1;
  }
  CHECK_CUDA(cudaMallocManaged(&s.dropped, s.bytes));
  CHECK_CUDA(cudaMallocManaged(&s.written, s.bytes));
  CHECK_CUDA(cudaHostAlloc(&s.pinned, s.beside, cudaHostAllocMapped));
  CHECK_CUDA(cudaHostAlloc(&s.pinned_out, s.beside, cudaHostAllocMapped));
  CHECK_CUDA(cudaMalloc(&s.device, s.beside));
  CHECK_CUDA(cudaMalloc(&s.device_out, s.beside));
  for (cudaStream_t* stream : {&s.drops, &s.work, &s.other})
    CHECK_CUDA(cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking));
  std::printf("drop and placement of %zu MiB; work beside moves %zu MiB\n", mib, s.beside >> 20);
  std::printf("%-14s %12s %12s %12s %12s %11s %16s\n", "beside", "drop call", "drop+wait", "place call",
              "place+wait", "alone GB/s", "other way GB/s");
  for (Beside kind : {Beside::none, Beside::h2d_copy, Beside::h2d_kernel, Beside::d2h_copy,
                      Beside::d2h_kernel, Beside::managed_write}) {
    double drop_call = 0, drop_total = 0, place_call = 0, place_total = 0;
    constexpr int kTimes = 4;
    for (int i = 0; i < kTimes; ++i) {
      held_beside(s, kind, false, drop_call, drop_total);
      held_beside(s, kind, true, place_call, place_total);
    }
    const bool moves = kind != Beside::none;
    const bool over_link = moves && kind != Beside::managed_write;
    std::printf("%-14s %9.2f ms %9.2f ms %9.2f ms %9.2f ms %11.1f %16.1f\n", name(kind), drop_call / kTimes,
                drop_total / kTimes, place_call / kTimes, place_total / kTimes,
                moves ? rate(s, kind, false) : 0.0, over_link ? rate(s, kind, true) : 0.0);
  }
  return 0;
}
