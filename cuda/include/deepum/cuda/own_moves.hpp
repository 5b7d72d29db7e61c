// deepum's own moves between managed blocks and its host swap store, and the threads that issue
// them. Those calls raise CUPTI callbacks as the program's do; on a thread issuing them, deepum's
// callbacks pass them through untouched (deciding on them would take the evictor's lock, which a
// program thread may hold while it waits for the eviction thread).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <span>

namespace deepum::cuda {

// Whether the calling thread is issuing deepum's own moves now.
bool issuing_own_moves();
// Marks the calling thread as issuing deepum's own moves for the scope's life.
class OwnMovesScope {
 public:
  OwnMovesScope();
  ~OwnMovesScope();
  OwnMovesScope(const OwnMovesScope&) = delete;
  OwnMovesScope& operator=(const OwnMovesScope&) = delete;

 private:
  bool was_ = false;
};

// One 2 MB block (or the part of one at a range's end) and its slot in the swap store.
struct BlockCopy {
  std::uint64_t block = 0, bytes = 0;
  void* slot = nullptr;
};

// Copies each block into its slot (`to_store`) or back, on `on`, in one batched call where the
// driver has it, the managed side hinted to be on `device`: a copy out of managed memory queued
// behind other work runs at the link's rate only batched (bench/swap_call_probe.cu, H100: 48 GB/s
// against 7 GB/s block by block). Block by block where the batch is refused as a whole.
CUresult copy_blocks(std::span<const BlockCopy> copies, bool to_store, CUdevice device, CUstream on);

}  // namespace deepum::cuda
