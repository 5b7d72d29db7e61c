// swap_store_check policy|pin: deepum's swap store (cuda/host_swap_store.hpp).
//   policy: how much it pins next: nothing while the reserve is free and the live memory's peak
//           over the limit is covered; large chunks while far behind, small ones near the target
//           and near the limit; nothing once full. Needs no GPU.
//   pin:    a chunk pinned by registering memory of deepum's own is registered host memory of the
//           size asked for, and a copy to the GPU and back through it keeps every byte. Needs a GPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "check.hpp"
#include "deepum/cuda/host_swap_store.hpp"

using deepum::cuda::HostSwapStore;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kSmall = HostSwapStore::kChunkBytes, kLarge = HostSwapStore::kLargeChunkBytes;

// Chunks of plain memory stand in for pinned ones: the policy only counts them. Kept to the end of
// the program (the store's destructor cannot unregister what was never registered, and leaves it).
HostSwapStore::Chunk plain_chunk(std::uint64_t bytes) {
  static std::vector<std::unique_ptr<char[]>> memory;
  memory.emplace_back(new char[bytes]);  // never touched: the pages are never made
  return {memory.back().get(), bytes, true};
}

int policy() {
  const std::uint64_t reserve = 4 * kSmall;
  HostSwapStore store(2048 * kMiB);
  // Empty, nothing over the limit yet: the reserve first, 256 MiB short: one large chunk.
  CHECK_TRUE(store.next_chunk_bytes(reserve, 0) == kLarge, "reserve of 256 MiB short: one large chunk");
  store.add_chunk(plain_chunk(kLarge));
  CHECK_TRUE(store.next_chunk_bytes(reserve, 0) == 0, "reserve free, nothing away: no chunk");
  // The live memory went 1 GiB over the limit: large chunks towards it plus the reserve.
  CHECK_TRUE(store.next_chunk_bytes(reserve, 1024 * kMiB) == kLarge, "1 GiB behind: a large chunk");
  for (int i = 0; i < 4; ++i) store.add_chunk(plain_chunk(kLarge));
  CHECK_TRUE(store.next_chunk_bytes(reserve, 1024 * kMiB) == 0, "1.25 GiB pinned covers 1 GiB + the reserve");
  CHECK_TRUE(store.next_chunk_bytes(reserve, 1088 * kMiB) == kSmall, "64 MiB behind: a small chunk");
  // Slots taken until less than the reserve is free: grows again, whatever the peak.
  for (std::uint64_t block = 0; block < 100; ++block) store.take(block * 2 * kMiB);
  CHECK_TRUE(store.free_bytes() == 1280 * kMiB - 200 * kMiB, "free %llu MiB",
             static_cast<unsigned long long>(store.free_bytes() / kMiB));
  CHECK_TRUE(store.next_chunk_bytes(reserve, 0) == 0, "1080 MiB free: no chunk");
  for (std::uint64_t block = 100; block < 540; ++block) store.take(block * 2 * kMiB);
  CHECK_TRUE(store.next_chunk_bytes(reserve, 0) == kSmall,
             "200 MiB free of a 256 MiB reserve: a small chunk");
  // Near the limit: no large chunk past it, then nothing once a small one no longer fits.
  CHECK_TRUE(store.next_chunk_bytes(reserve, 4096 * kMiB) == kLarge, "far behind, room: a large chunk");
  store.add_chunk(plain_chunk(kLarge));
  store.add_chunk(plain_chunk(kLarge));
  CHECK_TRUE(store.next_chunk_bytes(reserve, 4096 * kMiB) == kLarge,
             "1792 of 2048 MiB: a large chunk still fits");
  store.add_chunk(plain_chunk(kSmall));
  CHECK_TRUE(store.next_chunk_bytes(reserve, 4096 * kMiB) == kSmall, "1856 of 2048 MiB: only small ones fit");
  for (int i = 0; i < 3; ++i) store.add_chunk(plain_chunk(kSmall));
  CHECK_TRUE(store.full(), "2048 of 2048 MiB: full");
  CHECK_TRUE(store.next_chunk_bytes(reserve, 4096 * kMiB) == 0, "full: no chunk");
  // A failure ends growth too.
  HostSwapStore failed(2048 * kMiB);
  failed.pin_failed("cuMemHostRegister: refused");
  CHECK_TRUE(failed.next_chunk_bytes(reserve, 0) == 0, "after a failure: no chunk");
  return finish("swap_store_check policy");
}

int pin() {
  if (cudaFree(nullptr) != cudaSuccess) {  // the primary context, current from here on
    std::puts("SKIP: no CUDA device");
    return 77;
  }
  for (const std::uint64_t bytes : {kSmall, kLarge}) {
    std::string error;
    const HostSwapStore::Chunk chunk = HostSwapStore::pin_chunk(bytes, error);
    CHECK_TRUE(chunk.pointer != nullptr && error.empty(), "pinning %llu MiB: %s",
               static_cast<unsigned long long>(bytes / kMiB), error.c_str());
    if (chunk.pointer == nullptr) continue;
    CHECK_TRUE(chunk.registered && chunk.bytes == bytes, "registered %d, %llu bytes", chunk.registered,
               static_cast<unsigned long long>(chunk.bytes));
    unsigned flags = 0;
    CHECK_TRUE(cudaHostGetFlags(&flags, chunk.pointer) == cudaSuccess, "the driver knows it as pinned");
    auto* host = static_cast<unsigned char*>(chunk.pointer);
    const auto pattern = [](std::uint64_t page) { return static_cast<unsigned char>(page * 7 + 1); };
    for (std::uint64_t i = 0; i < bytes; i += 4096) host[i] = pattern(i / 4096);
    void* on_gpu = nullptr;
    CHECK_TRUE(cudaMalloc(&on_gpu, bytes) == cudaSuccess, "device memory");
    CHECK_TRUE(cudaMemcpy(on_gpu, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess, "to the GPU");
    std::memset(host, 0, bytes);
    CHECK_TRUE(cudaMemcpy(host, on_gpu, bytes, cudaMemcpyDeviceToHost) == cudaSuccess, "back");
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < bytes; i += 4096) wrong += host[i] != pattern(i / 4096);
    CHECK_TRUE(wrong == 0, "%llu pages came back changed", static_cast<unsigned long long>(wrong));
    cudaFree(on_gpu);
    HostSwapStore::unpin(chunk);
  }
  return finish("swap_store_check pin");
}

}  // namespace

int main(int argc, char** argv) {
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "policy") return policy();
  if (what == "pin") return pin();
  std::fprintf(stderr, "usage: swap_store_check policy|pin\n");
  return 2;
}
