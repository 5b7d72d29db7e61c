// deepum's own moves between managed blocks and its host swap store, and the threads that issue
// them. Those calls raise CUPTI callbacks as the program's do; on a thread issuing them, the tracer
// skips them (they are not the program's, and deciding on them would take the evictor's lock,
// which a program thread may hold while it waits for the eviction thread).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <span>

#include "deepum/core/residency_map.hpp"
#include "deepum/cuda/copy_kernel.hpp"

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

// A buffer of device memory (not managed) that copies between managed blocks and the store pass
// through, so that only copies within the GPU touch managed memory: copies between managed and
// pinned memory take turns, whichever streams they are on, while copies of device memory to and
// from pinned memory run both ways at once (bench/swap_call_probe.cu, H200, 256 MiB each way:
// 27 GB/s each way direct, 48 GB/s staged; a copy from managed to device memory ran at 1.9 TB/s).
// Used by one stream at a time: its copies are ordered in that stream.
class Staging {
 public:
  static constexpr std::uint64_t kBytes = std::uint64_t{32} << 20;
  static_assert(kBytes / (std::uint64_t{2} << 20) <= CopyKernel::kMaxCopies, "a piece is one launch");
  // Device memory in the current context, asked for once, and with `with_kernel` the copy kernel
  // for the managed side; false (copies go direct) where the driver refuses the memory.
  bool allocate(bool with_kernel);
  // The context is gone: the buffer and the kernel went with it.
  void forget() {
    buffer_ = 0;
    kernel_.forget();
  }
  CUdeviceptr buffer() const { return buffer_; }
  const CopyKernel& kernel() const { return kernel_; }

 private:
  CUdeviceptr buffer_ = 0;
  CopyKernel kernel_;
  bool asked_ = false;
};

// A second stream with a buffer of its own, for copy_blocks to take turns with: each piece's copy
// into (or out of) one buffer runs beside the link's copy of the piece before it through the other.
// Through one buffer each piece waits for the one before it: a swap's copies out ran at 48 GB/s
// alone and 38 GB/s beside copies back, through two at 53 and 43 (bench/both_ways_probe.cu, H200).
struct SecondLane {
  CUstream stream = nullptr;
  const Staging* staging = nullptr;
  bool usable() const { return stream != nullptr && staging != nullptr && staging->buffer() != 0; }
};

// Copies each block into its slot (`to_store`) or back, on `on`, through `staging` where it has a
// buffer: in pieces of the buffer's size, each one batched call between the store and the buffer
// and one between the buffer and the blocks (a launch of the buffer's kernel where it has one and
// takes every copy of the piece). With a usable `second` lane, every other piece goes there: the
// caller has made its stream wait for what `on` waits for, and makes `on` wait for it after.
// The managed side is hinted to be on `device`; a batched call the driver refuses as a whole is
// made copy by copy.
CUresult copy_blocks(std::span<const BlockCopy> copies, bool to_store, CUdevice device, CUstream on,
                     const Staging* staging = nullptr, SecondLane second = {});

// Drops `blocks`, just copied out on `on`, once those copies have ended: a host wait for `on`, then
// one cuMemDiscardBatchAsync on it, now idle. With the drop issued behind copies still running,
// GPT-2 124M's weights went back to what the host held before the first optimizer step in some
// runs; with this wait, in none (docs/ARCHITECTURE.md, "Lock discipline", says what is and is not
// known of why). Not CUDA_SUCCESS: nothing was dropped.
CUresult drop_after_copies(std::span<const core::AddressRange> blocks, CUstream on);

}  // namespace deepum::cuda
