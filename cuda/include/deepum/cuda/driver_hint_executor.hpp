// DriverHintExecutor: deepum's hints carried to the CUDA driver, from deepum's worker thread on a
// stream of its own, so a hint never waits behind the program's kernels nor they behind it.
#pragma once

#include <cuda.h>

#include <optional>
#include <string>

#include "deepum/core/hint_executor.hpp"

namespace deepum::cuda {

class DriverHintExecutor final : public core::HintExecutor {
 public:
  // Takes the context the program allocated in; call bind() on the worker thread before use.
  explicit DriverHintExecutor(CUcontext context) : context_(context) {}
  ~DriverHintExecutor() override;

  // Makes the context current on the calling thread and creates the stream. Empty string on
  // success, else what failed.
  std::string bind();

  bool evict_to_host(std::span<const core::AddressRange> ranges) override;
  bool submit(const core::HintPlan& plan) override;
  bool ready() override;
  std::optional<std::uint64_t> device_used_bytes() override;

 private:
  bool prefetch(std::span<const core::AddressRange> ranges, CUmemLocation location, CUstream stream);
  bool discard(std::span<const core::AddressRange> ranges, CUstream stream);
  bool fail(std::string error);  // logs the first failure, returns false

  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  // Evictions (and discards) run on one stream, prefetches to the GPU on another that waits for
  // the evictions of the same plan: the GPU is never asked to hold both, yet one plan's prefetches
  // overlap the next plan's evictions, using both directions of the link.
  CUstream stream_ = nullptr;
  CUstream prefetch_stream_ = nullptr;
  CUevent evictions_done_ = nullptr;
  bool evictions_pending_ = false;
  bool batch_supported_ = true;
  bool failure_logged_ = false;
};

// "cuMemPrefetchAsync: CUDA_ERROR_INVALID_VALUE (1)"; `what` may be empty.
std::string describe(const char* what, CUresult result);

// The context current on the calling thread (the program's, inside an allocation hook).
CUcontext current_context();

// Places a fresh range in host memory and waits for it, from the allocating thread (its context is
// current). The GPU's first touch then arrives as a migration CUPTI reports, so residency is
// counted exactly. An empty string on success, else what failed.
std::string place_on_host(std::uint64_t address, std::uint64_t bytes);

}  // namespace deepum::cuda
