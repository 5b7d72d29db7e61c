#include "deepum/cuda/host_swap_store.hpp"

#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {

HostSwapStore::~HostSwapStore() {
  if (driver::mem_free_host.get() == nullptr) return;
  for (void* chunk : chunks_) driver::mem_free_host.get()(chunk);
}

void* HostSwapStore::take(std::uint64_t block_address) {
  if (void* slot = find(block_address)) return slot;
  if (free_.empty()) return nullptr;
  void* slot = free_.back();
  free_.pop_back();
  slots_.emplace(block_address, slot);
  return slot;
}

bool HostSwapStore::wants_chunk(std::uint64_t reserve_bytes) const {
  return free_bytes() < reserve_bytes && !full();
}

void* HostSwapStore::pin_chunk(std::string& error) {
  if (driver::mem_host_alloc.get() == nullptr) {
    error = "the driver lacks cuMemHostAlloc";
    return nullptr;
  }
  void* chunk = nullptr;
  // Portable: the copies may run in any context of the process.
  if (CUresult r = driver::mem_host_alloc.get()(&chunk, kChunkBytes, CU_MEMHOSTALLOC_PORTABLE);
      r != CUDA_SUCCESS) {
    error = describe("cuMemHostAlloc", r);
    return nullptr;
  }
  return chunk;
}

void HostSwapStore::add_chunk(void* chunk) {
  chunks_.push_back(chunk);
  // Handed out from the chunk's start: consecutive blocks get consecutive slots.
  for (std::uint64_t offset = kChunkBytes; offset != 0; offset -= kSlotBytes)
    free_.push_back(static_cast<char*>(chunk) + offset - kSlotBytes);
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
