// staged_swap_probe: how fast a run of swaps (copy GPU-resident managed memory into pinned memory,
// then drop it on the GPU) goes, made two ways, with and without copies to the GPU running beside:
//   buffered: deepum's eviction thread as it is: 32 MiB pieces through two device buffers taking
//             turns on two streams (managed -> buffer, buffer -> pinned), then, once the host has
//             seen the copies end, one discard of the array; the next array's copies after it
//   staged:   the whole array into one half of a device staging area (one batched call), the
//             discard as soon as the host has seen that copy end, while the staging half goes to
//             pinned memory on a second stream; the next array into the other half
// Each way prints the swaps' rate, the discards' host time, and whether pinned memory got the
// arrays' contents. An array is `MiB` (default 256) in 2 MiB blocks; eight of them.
//
//   staged_swap_probe [MiB]   (keep well under free memory: it takes 8 + 4 arrays' worth)
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;
constexpr size_t kBlock = 2 << 20;
constexpr size_t kPiece = 32 << 20;
constexpr int kArrays = 8;

struct Setup {
  size_t bytes = 0;
  CUdevice device = 0;
  std::vector<char*> arrays;  // managed
  char* store = nullptr;      // pinned, kArrays arrays
  CUdeviceptr staging = 0;    // two arrays (staged) or two pieces (buffered)
  char* incoming = nullptr;   // pinned, the copies to the GPU beside
  CUdeviceptr landing = 0;    // where they land
  cudaStream_t copies = nullptr, second = nullptr, in = nullptr;
};

// Batched copies of `bytes` from `from` to `to`, block by block.
void copy_blocks(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUmemLocation to_where,
                 CUmemLocation from_where, cudaStream_t stream) {
  std::vector<CUdeviceptr> dsts, srcs;
  for (size_t offset = 0; offset < bytes; offset += kBlock) {
    dsts.push_back(to + offset);
    srcs.push_back(from + offset);
  }
  bench::batched_copies(dsts, srcs, from_where, to_where, kBlock, bench::cu(stream));
}

double discard(char* array, size_t bytes, cudaStream_t stream) {
  const auto start = Clock::now();
  CUdeviceptr pointer = bench::address(array);
  size_t size = bytes;
  CHECK_CU(cuMemDiscardBatchAsync(&pointer, &size, 1, 0, bench::cu(stream)));
  return ms_since(start);
}

void make_resident(const Setup& s) {
  for (int i = 0; i < kArrays; ++i) CHECK_CUDA(cudaMemsetAsync(s.arrays[i], 0x40 + i, s.bytes, s.copies));
  CHECK_CUDA(cudaStreamSynchronize(s.copies));
  std::memset(s.store, 0, s.bytes * kArrays);
}

// Copies to the GPU beside the swaps: `pieces` copies of 32 MiB, queued at once.
void start_incoming(const Setup& s, int pieces) {
  const CUmemLocation gpu = bench::on_gpu(s.device), host = bench::on_host();
  for (int i = 0; i < pieces; ++i)
    copy_blocks(s.landing + (i % 8) * kPiece, bench::address(s.incoming) + (i % 8) * kPiece, kPiece, gpu,
                host, s.in);
}

void swap_buffered(const Setup& s, int i, double& discard_ms) {
  const CUmemLocation gpu = bench::on_gpu(s.device), host = bench::on_host();
  cudaEvent_t joined = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventRecord(joined, s.copies));
  CHECK_CUDA(cudaStreamWaitEvent(s.second, joined, 0));
  for (size_t offset = 0, piece = 0; offset < s.bytes; offset += kPiece, ++piece) {
    cudaStream_t stream = piece % 2 == 0 ? s.copies : s.second;
    const CUdeviceptr buffer = s.staging + (piece % 2) * kPiece;
    copy_blocks(buffer, bench::address(s.arrays[i]) + offset, kPiece, gpu, gpu, stream);
    copy_blocks(bench::address(s.store) + i * s.bytes + offset, buffer, kPiece, host, gpu, stream);
  }
  CHECK_CUDA(cudaEventRecord(joined, s.second));
  CHECK_CUDA(cudaStreamWaitEvent(s.copies, joined, 0));
  CHECK_CUDA(cudaStreamSynchronize(s.copies));
  discard_ms += discard(s.arrays[i], s.bytes, s.copies);
  CHECK_CUDA(cudaEventDestroy(joined));
}

void swap_staged(const Setup& s, int i, std::vector<cudaEvent_t>& half_free, double& discard_ms) {
  const CUmemLocation gpu = bench::on_gpu(s.device), host = bench::on_host();
  const int half = i % 2;
  const CUdeviceptr staged = s.staging + half * s.bytes;
  CHECK_CUDA(cudaStreamWaitEvent(s.copies, half_free[half], 0));
  copy_blocks(staged, bench::address(s.arrays[i]), s.bytes, gpu, gpu, s.copies);
  cudaEvent_t in_staging = nullptr;
  CHECK_CUDA(cudaEventCreateWithFlags(&in_staging, cudaEventDisableTiming));
  CHECK_CUDA(cudaEventRecord(in_staging, s.copies));
  CHECK_CUDA(cudaStreamWaitEvent(s.second, in_staging, 0));
  copy_blocks(bench::address(s.store) + i * s.bytes, staged, s.bytes, host, gpu, s.second);
  CHECK_CUDA(cudaEventRecord(half_free[half], s.second));
  CHECK_CUDA(cudaEventSynchronize(in_staging));
  discard_ms += discard(s.arrays[i], s.bytes, s.copies);
  CHECK_CUDA(cudaEventDestroy(in_staging));
}

bool store_holds_arrays(const Setup& s) {
  for (int i = 0; i < kArrays; ++i) {
    for (size_t offset = 0; offset < s.bytes; offset += kBlock / 2) {
      if (s.store[i * s.bytes + offset] != static_cast<char>(0x40 + i)) return false;
    }
  }
  return true;
}

void run(const char* name, Setup& s, bool staged, bool beside, bool show) {
  make_resident(s);
  std::vector<cudaEvent_t> half_free(2);
  for (cudaEvent_t& event : half_free) {
    CHECK_CUDA(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventRecord(event, s.second));
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  // Copies to the GPU for about as long as the swaps take at the link's rate, and more.
  if (beside) start_incoming(s, static_cast<int>(s.bytes * kArrays / kPiece) * 2);
  const auto start = Clock::now();
  double discard_ms = 0;
  for (int i = 0; i < kArrays; ++i) {
    if (staged) {
      swap_staged(s, i, half_free, discard_ms);
    } else {
      swap_buffered(s, i, discard_ms);
    }
  }
  CHECK_CUDA(cudaStreamSynchronize(s.copies));
  CHECK_CUDA(cudaStreamSynchronize(s.second));
  const double ms = ms_since(start);
  CHECK_CUDA(cudaDeviceSynchronize());
  for (cudaEvent_t event : half_free) CHECK_CUDA(cudaEventDestroy(event));
  if (!show) return;
  const double gb = static_cast<double>(s.bytes) * kArrays / 1e9;
  std::printf("%-18s %8.2f ms for %d arrays  %6.1f GB/s  discards %6.3f ms each  store %s\n", name, ms,
              kArrays, gb / (ms / 1e3), discard_ms / kArrays,
              store_holds_arrays(s) ? "holds the arrays" : "WRONG");
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0;
  const size_t bytes =
      bench::requested_bytes(argc, argv, 256, 24, "staged_swap_probe", &device) / kPiece * kPiece;
  Setup s;
  s.bytes = bytes;
  CHECK_CU(cuInit(0));
  CHECK_CU(cuDeviceGet(&s.device, device));
  for (int i = 0; i < kArrays; ++i) {
    char* array = nullptr;
    CHECK_CUDA(cudaMallocManaged(&array, bytes));
    s.arrays.push_back(array);
  }
  CHECK_CUDA(cudaMallocHost(&s.store, bytes * kArrays));
  CHECK_CUDA(cudaMallocHost(&s.incoming, 8 * kPiece));
  void* staging = nullptr;
  void* landing = nullptr;
  CHECK_CUDA(cudaMalloc(&staging, 2 * bytes));
  CHECK_CUDA(cudaMalloc(&landing, 8 * kPiece));
  s.staging = bench::address(staging);
  s.landing = bench::address(landing);
  CHECK_CUDA(cudaStreamCreateWithFlags(&s.copies, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s.second, cudaStreamNonBlocking));
  CHECK_CUDA(cudaStreamCreateWithFlags(&s.in, cudaStreamNonBlocking));
  std::printf("%d arrays of %zu MiB, swapped out one after another\n", kArrays, bytes >> 20);
  for (int round = 0; round < 3; ++round) {  // the first round warms the driver up
    const bool show = round > 0;
    run("buffered", s, false, false, show);
    run("staged", s, true, false, show);
    run("buffered_beside_in", s, false, true, show);
    run("staged_beside_in", s, true, true, show);
  }
  return 0;
}
