// pin_rate_probe: what pinning host memory for deepum's swap store costs, and whether it holds up
// the program. Pins GiB of host memory in pieces by four methods (cuMemHostAlloc in 64 MiB and in
// 256 MiB pieces; mmap, with and without transparent huge pages asked for, every page touched,
// then cuMemHostRegister) and prints each method's rate; then pins again in a second thread while
// the main thread launches short kernels and copies a few bytes, and prints those calls' latency,
// alone and beside the pinning; last, the rate of two threads pinning at once, and of pinning
// beside moves of 1 GiB of managed memory between the GPU and the host.
//
//   pin_rate_probe [GiB]   (default 2 per method; host memory, and the 1 GiB managed)
#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "managed_bench.hpp"

namespace {

using bench::Clock;
using bench::ms_since;

__global__ void tiny(int* out) {
  if (threadIdx.x == 0) *out += 1;
}

struct Pinned {
  void* pointer = nullptr;
  size_t bytes = 0;
  bool mapped = false;  // mmap + cuMemHostRegister, else cuMemHostAlloc
};

Pinned pin_alloc(size_t bytes) {
  Pinned p{nullptr, bytes, false};
  CHECK_CU(cuMemHostAlloc(&p.pointer, bytes, CU_MEMHOSTALLOC_PORTABLE));
  return p;
}

// As deepum's swap store pins: its own mapping, every page touched before the driver pins it,
// with or without transparent huge pages asked for.
Pinned pin_mapped(size_t bytes, bool huge) {
  Pinned p{nullptr, bytes, true};
  p.pointer = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p.pointer == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  if (huge) madvise(p.pointer, bytes, MADV_HUGEPAGE);
  for (size_t offset = 0; offset < bytes; offset += 4096) static_cast<char*>(p.pointer)[offset] = 0;
  CHECK_CU(cuMemHostRegister(p.pointer, bytes, CU_MEMHOSTREGISTER_PORTABLE));
  return p;
}
Pinned pin_huge(size_t bytes) { return pin_mapped(bytes, true); }
Pinned pin_small(size_t bytes) { return pin_mapped(bytes, false); }

void unpin(const Pinned& p) {
  if (p.mapped) {
    CHECK_CU(cuMemHostUnregister(p.pointer));
    munmap(p.pointer, p.bytes);
  } else {
    CHECK_CU(cuMemFreeHost(p.pointer));
  }
}

// Pins `total` bytes in `piece`-byte pieces; returns the pieces and prints the rate.
std::vector<Pinned> pin_all(const char* method, size_t total, size_t piece, Pinned (*pin)(size_t)) {
  std::vector<Pinned> pieces;
  std::vector<double> each;
  const auto start = Clock::now();
  for (size_t done = 0; done < total; done += piece) {
    const auto one = Clock::now();
    pieces.push_back(pin(piece));
    each.push_back(ms_since(one));
  }
  const double ms = ms_since(start);
  std::sort(each.begin(), each.end());
  std::printf(
      "pin %-26s %5zu MiB pieces: %7.1f ms for %zu MiB, %6.2f GB/s; a piece median %.2f ms, max %.2f\n",
      method, piece >> 20, ms, total >> 20, total / ms / 1e6, each[each.size() / 2], each.back());
  return pieces;
}

// Launch + 8-byte copy latency on the main thread while `going()`: median, p99 and max in us.
template <typename Going>
void launch_latency(const char* beside, int* counter, cudaStream_t stream, Going going) {
  std::vector<double> each;
  int host = 0;
  while (going() || each.empty()) {
    const auto one = Clock::now();
    tiny<<<1, 32, 0, stream>>>(counter);
    CHECK_CUDA(cudaMemcpyAsync(&host, counter, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    each.push_back(ms_since(one) * 1000.0);
  }
  std::sort(each.begin(), each.end());
  std::printf("launch+copy+sync beside %-30s %6zu calls: median %7.1f us, p99 %9.1f us, max %9.1f us\n",
              beside, each.size(), each[each.size() / 2], each[each.size() * 99 / 100], each.back());
}

// Two threads pinning at once, half each: whether pinning is bound by one call at a time.
void pin_in_two_threads(size_t total) {
  std::vector<Pinned> halves[2];
  const auto start = Clock::now();
  std::thread threads[2];
  for (int i = 0; i < 2; ++i) {
    threads[i] = std::thread([&, i] {
      CHECK_CUDA(cudaSetDevice(0));
      halves[i] = pin_all("THP+cuMemHostRegister, 1 of 2 threads", total / 2, size_t{64} << 20, pin_huge);
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double ms = ms_since(start);
  std::printf("pin THP+cuMemHostRegister in two threads: %7.1f ms for %zu MiB, %6.2f GB/s together\n", ms,
              total >> 20, total / ms / 1e6);
  for (auto& half : halves)
    for (const Pinned& p : half) unpin(p);
}

// Pinning in a thread while this one moves 1 GiB of managed memory to the GPU and back, as
// deepum's eviction thread does beside its worker: whether the driver's moves slow the pinning.
void pin_beside_managed_moves(size_t total, size_t piece, cudaStream_t stream) {
  const size_t bytes = size_t{1} << 30;
  char* managed = nullptr;
  CHECK_CUDA(cudaMallocManaged(&managed, bytes));
  CHECK_CUDA(cudaMemset(managed, 1, bytes));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::atomic<bool> pinning{true};
  std::vector<Pinned> pieces;
  std::thread pinner([&] {
    CHECK_CUDA(cudaSetDevice(0));
    pieces = pin_all("THP+cuMemHostRegister beside moves", total, piece, pin_huge);
    pinning = false;
  });
  int moves = 0;
  while (pinning) {
    const cudaMemLocation to = moves % 2 == 0 ? bench::device_location(0) : bench::host_location();
    CHECK_CUDA(cudaMemPrefetchAsync(managed, bytes, to, 0, stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));
    ++moves;
  }
  pinner.join();
  std::printf("managed 1 GiB moves meanwhile: %d\n", moves);
  for (const Pinned& p : pieces) unpin(p);
  CHECK_CUDA(cudaFree(managed));
}

}  // namespace

int main(int argc, char** argv) {
  const size_t gib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2;
  if (gib < 1 || gib > 16) {
    std::fprintf(stderr, "usage: pin_rate_probe [GiB, 1-16]\n");
    return 2;
  }
  const size_t total = gib << 30;
  CHECK_CUDA(cudaFree(nullptr));  // the context
  int* counter = nullptr;
  CHECK_CUDA(cudaMalloc(&counter, sizeof(int)));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const auto release = [](std::vector<Pinned>& pieces) {
    for (const Pinned& p : pieces) unpin(p);
    pieces.clear();
  };
  std::vector<Pinned> pieces = pin_all("cuMemHostAlloc", total, size_t{64} << 20, pin_alloc);
  release(pieces);
  pieces = pin_all("cuMemHostAlloc", total, size_t{256} << 20, pin_alloc);
  release(pieces);
  pieces = pin_all("mmap+THP+cuMemHostRegister", total, size_t{64} << 20, pin_huge);
  release(pieces);
  pieces = pin_all("mmap+cuMemHostRegister", total, size_t{64} << 20, pin_small);
  release(pieces);

  const auto start = Clock::now();
  launch_latency("nothing", counter, stream, [&] { return ms_since(start) < 300; });
  for (const auto& method : {std::pair{"cuMemHostAlloc 64 MiB pinning", pin_alloc},
                             std::pair{"THP+cuMemHostRegister pinning", pin_huge},
                             std::pair{"cuMemHostRegister pinning", pin_small}}) {
    std::atomic<bool> pinning{true};
    std::thread pinner([&] {
      CHECK_CUDA(cudaSetDevice(0));  // the primary context, current in this thread too
      pieces = pin_all(method.first, total, size_t{64} << 20, method.second);
      pinning = false;
    });
    launch_latency(method.first, counter, stream, [&] { return pinning.load(); });
    pinner.join();
    release(pieces);
  }
  pin_in_two_threads(total);
  pin_beside_managed_moves(total, size_t{64} << 20, stream);
  pin_beside_managed_moves(total, size_t{256} << 20, stream);
  return 0;
}
