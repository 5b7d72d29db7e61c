// A kernel of deepum's own that copies within the GPU, for the leg of a swap's copies that touches
// managed memory. The driver's copy calls that name managed memory held the calling thread 9-36 us
// a 2 MB block copied into it and up to 121 us a block copied out of it in the library
// (bench/results/2026-11-28-h200-call-costs), where a launch returns in a few microseconds for a
// piece of 16 blocks. Its pages are placed on the GPU before it runs, so it raises no faults.
// Shipped as PTX text, which the driver compiles for the GPU at hand: building deepum needs no
// CUDA compiler.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace deepum::cuda {

// One copy within the GPU: `bytes` from `source` to `destination`.
struct DeviceCopy {
  CUdeviceptr destination = 0, source = 0;
  std::uint64_t bytes = 0;
};

class CopyKernel {
 public:
  static constexpr std::size_t kMaxCopies = 16;  // one launch's; a staging buffer's pieces

  // The kernel's PTX (tests/programs/copy_kernel_ptx.cpp hands it to ptxas).
  static const char* ptx();
  // Whether the kernel copies `copy`: both ends and the size multiples of 16 bytes.
  static bool takes(const DeviceCopy& copy);

  // Loaded into the current context, once; false where the driver refuses it (copies then go
  // through the driver's copy calls).
  bool load();
  bool loaded() const { return function_ != nullptr; }
  // The context is gone: the module went with it.
  void forget() { function_ = nullptr; }
  // One launch on `on` copying every one of `copies` (at most kMaxCopies, each taken by takes()).
  CUresult launch(std::span<const DeviceCopy> copies, CUstream on) const;

 private:
  CUfunction function_ = nullptr;
  bool asked_ = false;
};

}  // namespace deepum::cuda
