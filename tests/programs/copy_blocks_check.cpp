// copy_blocks_check: deepum's swap copies (cuda/own_moves.hpp) move every byte, both ways, through
// a staging buffer with the copy kernel, through one without it, through two taking turns on two
// streams, and direct: blocks of 2 MB over more than one staging piece, a range's short last block, and a
// copy the kernel does not take (not 16-byte aligned), which goes through the driver's copy call. Needs a
// GPU; exits 77 without one.
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "check.hpp"
#include "deepum/cuda/own_moves.hpp"

using deepum::cuda::BlockCopy;
using deepum::cuda::copy_blocks;
using deepum::cuda::CopyKernel;
using deepum::cuda::SecondLane;
using deepum::cuda::Staging;

namespace {

constexpr std::uint64_t kBlock = std::uint64_t{2} << 20;
// 20 whole blocks (two staging pieces) and a short last one.
constexpr std::uint64_t kBytes = 20 * kBlock + 12288;

std::uint32_t word(std::uint32_t seed, std::uint64_t i) {
  return seed ^ static_cast<std::uint32_t>(i * 2654435761u);
}

// The blocks of [address, address + bytes) and a pinned slot for each.
std::vector<BlockCopy> blocks_with_slots(CUdeviceptr address, std::uint64_t bytes) {
  std::vector<BlockCopy> copies;
  for (std::uint64_t at = 0; at < bytes; at += kBlock) {
    BlockCopy copy{address + at, std::min(kBlock, bytes - at), nullptr};
    if (cuMemHostAlloc(&copy.slot, copy.bytes, 0) != CUDA_SUCCESS) return {};
    copies.push_back(copy);
  }
  return copies;
}

bool same(const std::uint32_t* words, std::uint64_t count, std::uint32_t seed, std::uint64_t first) {
  for (std::uint64_t i = 0; i < count; ++i) {
    if (words[i] != word(seed, first + i)) return false;
  }
  return true;
}

// Out to the slots and back again, through `staging` (null: direct) and `second`, over `bytes` at
// `address`.
void round_trip(const char* how, CUdeviceptr address, std::uint64_t bytes, const Staging* staging,
                std::uint32_t seed, CUstream stream, SecondLane second = {}) {
  auto* managed = reinterpret_cast<std::uint32_t*>(static_cast<std::uintptr_t>(address));
  for (std::uint64_t i = 0; i < bytes / 4; ++i) managed[i] = word(seed, i);
  CUmemLocation gpu{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  CHECK_TRUE(cuMemPrefetchAsync_v2(address, bytes, gpu, 0, stream) == CUDA_SUCCESS &&
                 cuStreamSynchronize(stream) == CUDA_SUCCESS,
             "%s: prefetch", how);
  const std::vector<BlockCopy> copies = blocks_with_slots(address, bytes);
  CHECK_TRUE(!copies.empty(), "%s: pinned slots", how);
  CHECK_TRUE(copy_blocks(copies, /*to_store=*/true, 0, stream, staging, second) == CUDA_SUCCESS,
             "%s: copies out", how);
  CHECK_TRUE(cuStreamSynchronize(stream) == CUDA_SUCCESS, "%s: copies out end", how);
  if (second.usable())
    CHECK_TRUE(cuStreamSynchronize(second.stream) == CUDA_SUCCESS, "%s: second lane's copies out end", how);
  std::uint64_t first = 0;
  for (const BlockCopy& copy : copies) {
    CHECK_TRUE(same(static_cast<const std::uint32_t*>(copy.slot), copy.bytes / 4, seed, first),
               "%s: the slot of block %llu holds the block", how,
               static_cast<unsigned long long>(first * 4 / kBlock));
    first += copy.bytes / 4;
  }
  CHECK_TRUE(cuMemsetD8Async(address, 0, bytes, stream) == CUDA_SUCCESS, "%s: clear", how);
  CHECK_TRUE(cuStreamSynchronize(stream) == CUDA_SUCCESS, "%s: cleared", how);
  CHECK_TRUE(copy_blocks(copies, /*to_store=*/false, 0, stream, staging, second) == CUDA_SUCCESS,
             "%s: copies back", how);
  CHECK_TRUE(cuStreamSynchronize(stream) == CUDA_SUCCESS, "%s: copies back end", how);
  if (second.usable())
    CHECK_TRUE(cuStreamSynchronize(second.stream) == CUDA_SUCCESS, "%s: second lane's copies back end", how);
  CHECK_TRUE(same(managed, bytes / 4, seed, 0), "%s: the blocks hold their contents again", how);
  for (const BlockCopy& copy : copies) cuMemFreeHost(copy.slot);
}

}  // namespace

int main() {
  int devices = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
    std::puts(
        "SKIP: no CUDA GPU here (cuInit or cuDeviceGetCount found none); this test runs on the GPU machine");
    return 77;
  }
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  CUdeviceptr managed = 0;
  if (cuDevicePrimaryCtxRetain(&context, 0) != CUDA_SUCCESS || cuCtxSetCurrent(context) != CUDA_SUCCESS ||
      cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS ||
      cuMemAllocManaged(&managed, kBytes + 13 * kBlock, CU_MEM_ATTACH_GLOBAL) != CUDA_SUCCESS) {
    std::puts("FAIL: a context, a stream and managed memory");
    return 1;
  }
  Staging with_kernel, without_kernel;
  CHECK_TRUE(with_kernel.allocate(/*with_kernel=*/true), "a staging buffer");
  CHECK_TRUE(with_kernel.kernel().loaded(), "the driver compiles and loads the copy kernel");
  CHECK_TRUE(without_kernel.allocate(/*with_kernel=*/false) && !without_kernel.kernel().loaded(),
             "a staging buffer without the kernel");
  CHECK_TRUE(CopyKernel::takes({managed, with_kernel.buffer(), kBlock}) &&
                 !CopyKernel::takes({managed + 8, with_kernel.buffer(), kBlock}) &&
                 !CopyKernel::takes({managed, with_kernel.buffer(), 1000}),
             "the kernel takes 16-byte multiples alone");
  round_trip("kernel", managed, kBytes, &with_kernel, 0x1234u, stream);
  round_trip("kernel, not aligned", managed + 8, kBytes - 1000, &with_kernel, 0x5678u, stream);
  round_trip("batched calls", managed, kBytes, &without_kernel, 0x9abcu, stream);
  // Two lanes: pieces alternate between the buffers (three pieces: the first lane takes two).
  Staging second_buffer;
  CUstream second_stream = nullptr;
  CHECK_TRUE(second_buffer.allocate(/*with_kernel=*/true) &&
                 cuStreamCreate(&second_stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS,
             "a second buffer and stream");
  round_trip("two lanes", managed, kBytes + 12 * kBlock, &with_kernel, 0x2468u, stream,
             {second_stream, &second_buffer});
  round_trip("two lanes, batched calls", managed, kBytes + 12 * kBlock, &without_kernel, 0x1357u, stream,
             {second_stream, &second_buffer});
  round_trip("direct", managed, kBytes, nullptr, 0xdef0u, stream);
  cuMemFree(managed);
  return finish("copy_blocks_check");
}
