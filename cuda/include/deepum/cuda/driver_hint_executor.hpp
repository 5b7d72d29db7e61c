// DriverHintExecutor: deepum's hints carried to the CUDA driver on streams of deepum's own, so a
// hint never waits behind the program's kernels nor they behind it. Plans are carried out by a
// thread of their own: a prefetch to the host holds its calling thread for as long as the
// migration runs (up to ~0.9 s measured on an H100), and the worker must keep reading events
// meanwhile.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "deepum/core/hint_executor.hpp"

namespace deepum::cuda {

class DriverHintExecutor final : public core::HintExecutor {
 public:
  // Takes the context the program allocated in; call bind() on the worker thread before use.
  explicit DriverHintExecutor(CUcontext context) : context_(context) {}
  ~DriverHintExecutor() override;

  // Makes the context current on the calling thread, creates the streams and starts the hint
  // thread. Empty string on success, else what failed.
  std::string bind();
  // Waits for the plan being carried out, if any, and ends the hint thread.
  void stop();

  bool evict_to_host(std::span<const core::AddressRange> ranges) override;
  bool submit(const core::HintPlan& plan) override;
  std::uint64_t evictions_in_flight_bytes() override;
  std::optional<std::uint64_t> device_used_bytes() override;

 private:
  void hint_loop();
  bool carry_out(const core::HintPlan& plan);  // on the hint thread
  bool prefetch(std::span<const core::AddressRange> ranges, CUmemLocation location, CUstream stream);
  bool discard(std::span<const core::AddressRange> ranges, CUstream stream);
  bool fail(std::string error);  // logs the first failure, returns false

  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  // Evictions (and discards) run on one stream from the hint thread, prefetches to the GPU on
  // another, started by the worker at once: the two directions of the link overlap, and a plan only
  // prefetches into room that is already free.
  CUstream stream_ = nullptr;
  CUstream prefetch_stream_ = nullptr;

  std::thread hint_thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::optional<core::HintPlan> queued_;  // under mutex_: discards and evictions, one plan at a time
  std::uint64_t evicting_bytes_ = 0;      // under mutex_: queued or running
  bool stopping_ = false;                 // under mutex_
  bool batch_supported_ = true;
  std::atomic<bool> failure_logged_{false};  // the worker and the hint thread both fail
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
