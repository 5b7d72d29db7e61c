// DriverHintExecutor: deepum's hints carried to the CUDA driver on streams of deepum's own, so a
// hint never waits behind the program's kernels nor they behind it. Evictions and prefetches each
// have a thread (a lane) of their own: a prefetch call holds its calling thread while the driver
// migrates (up to ~0.9 s measured on an H100), the worker must keep reading events meanwhile, and
// the two directions of the link should overlap.
#pragma once

#include <cuda.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "deepum/core/hint_executor.hpp"

namespace deepum::cuda {

// The pointer and size arrays the driver's batched memory calls take.
struct BatchRanges {
  explicit BatchRanges(std::span<const core::AddressRange> ranges);
  std::vector<CUdeviceptr> pointers;
  std::vector<size_t> sizes;
};

class DriverHintExecutor final : public core::HintExecutor {
 public:
  // Takes the context the program allocated in; call bind() on the worker thread before use.
  explicit DriverHintExecutor(CUcontext context) : context_(context) {}
  ~DriverHintExecutor() override;

  // Makes the context current on the calling thread, creates the streams and starts the lanes.
  // Empty string on success, else what failed.
  std::string bind();
  // Waits for the hints being carried out, if any, and ends the lanes.
  void stop();

  bool evict_to_host(std::span<const core::AddressRange> ranges) override;
  bool submit(const core::HintPlan& plan) override;
  std::uint64_t evictions_in_flight_bytes() override { return eviction_lane_.in_flight_bytes(); }
  std::uint64_t prefetches_in_flight_bytes() override { return prefetch_lane_.in_flight_bytes(); }
  std::optional<std::uint64_t> device_used_bytes() override;

 private:
  // A thread that carries out one batch of hints at a time, in the program's context.
  class Lane {
   public:
    void start(CUcontext context, const char* name, std::function<void(const core::HintPlan&)> work);
    // Hands over a batch; false while the last one is still running.
    bool try_hand_over(core::HintPlan batch, std::uint64_t bytes);
    std::uint64_t in_flight_bytes();
    void stop();

   private:
    void loop(CUcontext context);
    std::function<void(const core::HintPlan&)> work_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::optional<core::HintPlan> queued_;  // under mutex_
    std::uint64_t in_flight_ = 0;           // under mutex_: bytes queued or running
    bool stopping_ = false;                 // under mutex_
  };

  void run_evictions(const core::HintPlan& batch);   // eviction lane: discards and evictions
  void run_prefetches(const core::HintPlan& batch);  // prefetch lane: prefetches to the GPU
  bool prefetch(std::span<const core::AddressRange> ranges, CUmemLocation location, CUstream stream);
  bool discard(std::span<const core::AddressRange> ranges, CUstream stream);
  bool fail(std::string error);  // logs the first failure, returns false

  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  // Evictions (and discards, and the worker's synchronous evictions) on one stream, prefetches to
  // the GPU on another: a plan only prefetches into room that is already free, so they need not
  // wait for each other.
  CUstream stream_ = nullptr;
  CUstream prefetch_stream_ = nullptr;
  Lane eviction_lane_, prefetch_lane_;
  bool batch_supported_ = true;
  std::atomic<bool> failure_logged_{false};  // the worker and the lanes all fail
};

// "cuMemPrefetchAsync: CUDA_ERROR_INVALID_VALUE (1)"; `what` may be empty.
std::string describe(const char* what, CUresult result);

// The context current on the calling thread (the program's, inside an allocation hook).
CUcontext current_context();

// Places a fresh range in host memory and waits for it, from the allocating thread (its context is
// current). The GPU's first touch then arrives as a migration CUPTI reports, so residency is
// counted exactly. With `prefer_host` (remote_access), the range's preferred location becomes the
// host: a GPU touch then maps it over the link instead of migrating it, and only an explicit
// prefetch moves it to the GPU. `map_for_gpu` also maps it for the current device ahead of time,
// so not even the first touch faults. An empty string on success, else what failed.
std::string place_on_host(std::uint64_t address, std::uint64_t bytes, bool prefer_host, bool map_for_gpu);

}  // namespace deepum::cuda
