#include "deepum/cuda/host_swap_store.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {

HostSwapStore::~HostSwapStore() {
  for (const Chunk& chunk : chunks_) unpin(chunk);
}

void* HostSwapStore::take(std::uint64_t block_address) {
  if (void* slot = find(block_address)) return slot;
  if (free_.empty()) return nullptr;
  void* slot = free_.back();
  free_.pop_back();
  slots_.emplace(block_address, slot);
  return slot;
}

std::uint64_t HostSwapStore::next_chunk_bytes(std::uint64_t reserve_bytes, std::uint64_t away_bytes) const {
  const auto below = [](std::uint64_t target, std::uint64_t have) {
    return target > have ? target - have : 0;
  };
  const std::uint64_t short_by =
      std::max(below(reserve_bytes, free_bytes()), below(away_bytes + reserve_bytes, pinned_bytes_));
  if (short_by == 0 || full()) return 0;
  const bool large = short_by >= kLargeChunkBytes && pinned_bytes_ + kLargeChunkBytes <= limit_;
  return large ? kLargeChunkBytes : kChunkBytes;
}

namespace {

constexpr std::uint64_t kHugePageBytes = std::uint64_t{2} << 20;

// `bytes` of anonymous memory aligned to a huge page, with huge pages asked for, every page
// faulted in, and not inherited by a child (a fork would copy pinned pages eagerly); nullptr if
// the mapping fails.
void* map_prefaulted(std::uint64_t bytes) {
  void* mapped =
      mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(mapped);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) & ~(kHugePageBytes - 1);
  if (aligned != start) munmap(mapped, aligned - start);
  if (const std::uintptr_t tail = start + bytes + kHugePageBytes - (aligned + bytes); tail != 0)
    munmap(reinterpret_cast<void*>(aligned + bytes), tail);
  auto* memory = reinterpret_cast<char*>(aligned);
  madvise(memory, bytes, MADV_HUGEPAGE);  // advice only: without it the pages are small
  madvise(memory, bytes, MADV_DONTFORK);
  for (std::uint64_t offset = 0; offset < bytes; offset += 4096) memory[offset] = 0;
  return memory;
}

}  // namespace

// Registering memory of our own pins beside the program's launches without holding them up, where
// cuMemHostAlloc held them for the whole of its pinning; in huge pages 2.3-3.5x as fast as
// cuMemHostAlloc, and at about its rate in small ones (bench/pin_rate_probe on the H200 machine).
// The driver's own allocation stays the fallback where registering is refused.
HostSwapStore::Chunk HostSwapStore::pin_chunk(std::uint64_t bytes, std::string& error) {
  std::string registering;
  if (driver::mem_host_register.get() == nullptr) {
    registering = "the driver lacks cuMemHostRegister";
  } else if (void* memory = map_prefaulted(bytes); memory == nullptr) {
    registering = std::string("mmap: ") + std::strerror(errno);
  } else if (CUresult r = driver::mem_host_register.get()(memory, bytes, CU_MEMHOSTREGISTER_PORTABLE);
             r != CUDA_SUCCESS) {
    registering = describe("cuMemHostRegister", r);
    munmap(memory, bytes);
  } else {
    return {memory, bytes, true};  // portable: the copies may run in any context of the process
  }
  void* memory = nullptr;
  if (driver::mem_host_alloc.get() == nullptr) {
    error = "the driver lacks cuMemHostAlloc (" + registering + ")";
  } else if (CUresult r = driver::mem_host_alloc.get()(&memory, bytes, CU_MEMHOSTALLOC_PORTABLE);
             r != CUDA_SUCCESS) {
    error = describe("cuMemHostAlloc", r) + " (" + registering + ")";
    memory = nullptr;
  }
  return {memory, bytes, false};
}

void HostSwapStore::unpin(const Chunk& chunk) {
  if (chunk.pointer == nullptr) return;
  if (!chunk.registered) {
    if (driver::mem_free_host.get() != nullptr) driver::mem_free_host.get()(chunk.pointer);
    return;
  }
  // Unmapped only once unregistered: the driver may still reach pages it holds pinned.
  if (driver::mem_host_unregister.get() != nullptr &&
      driver::mem_host_unregister.get()(chunk.pointer) == CUDA_SUCCESS)
    munmap(chunk.pointer, chunk.bytes);
}

void HostSwapStore::add_chunk(const Chunk& chunk) {
  free_.reserve(free_.size() + chunk.bytes / kSlotBytes);  // nothing throws once the chunk is held
  chunks_.push_back(chunk);
  pinned_bytes_ += chunk.bytes;
  // Handed out from the chunk's start: consecutive blocks get consecutive slots.
  for (std::uint64_t offset = chunk.bytes; offset != 0; offset -= kSlotBytes)
    free_.push_back(static_cast<char*>(chunk.pointer) + offset - kSlotBytes);
}

void* HostSwapStore::find(std::uint64_t block_address) const {
  const auto it = slots_.find(block_address);
  return it == slots_.end() ? nullptr : it->second;
}

void* HostSwapStore::detach(std::uint64_t block_address) {
  const auto it = slots_.find(block_address);
  if (it == slots_.end()) return nullptr;
  void* slot = it->second;
  slots_.erase(it);
  return slot;
}

}  // namespace deepum::cuda
