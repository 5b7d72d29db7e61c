#include "deepum/cuda/driver_hint_executor.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "deepum/core/capture_gate.hpp"
#include "deepum/core/log.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {
using namespace driver;

std::string describe(const char* what, CUresult result) {
  const char* name = nullptr;
  if (auto fn = get_error_name.get(); fn == nullptr || fn(result, &name) != CUDA_SUCCESS) name = "CUDA error";
  const std::string prefix = what != nullptr && *what != '\0' ? std::string(what) + ": " : std::string();
  return prefix + name + " (" + std::to_string(static_cast<int>(result)) + ")";
}

CUcontext current_context() {
  CUcontext context = nullptr;
  if (auto fn = ctx_get_current.get(); fn == nullptr || fn(&context) != CUDA_SUCCESS) return nullptr;
  return context;
}

DriverHintExecutor::~DriverHintExecutor() {
  // Left alone at process exit: the driver may already be torn down, and the stream dies with it.
}

std::string DriverHintExecutor::bind() {
  if (context_ == nullptr) return "no CUDA context";
  if (CUresult r = ctx_set_current.get()(context_); r != CUDA_SUCCESS) return describe("cuCtxSetCurrent", r);
  if (CUresult r = ctx_get_device.get()(&device_); r != CUDA_SUCCESS) return describe("cuCtxGetDevice", r);
  if (CUresult r = stream_create.get()(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    return describe("cuStreamCreate", r);
  }
  if (CUresult r = stream_create.get()(&prefetch_stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    prefetch_stream_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  eviction_lane_.start(context_, "deepum-evict",
                       [this](const core::HintPlan& batch) { run_evictions(batch); });
  prefetch_lane_.start(context_, "deepum-prefetch",
                       [this](const core::HintPlan& batch) { run_prefetches(batch); });
  return {};
}

void DriverHintExecutor::stop() {
  eviction_lane_.stop();
  prefetch_lane_.stop();
}

void DriverHintExecutor::Lane::start(CUcontext context, const char* name,
                                     std::function<void(const core::HintPlan&)> work) {
  work_ = std::move(work);
  thread_ = std::thread([this, context] { loop(context); });
  pthread_setname_np(thread_.native_handle(), name);
}

void DriverHintExecutor::Lane::loop(CUcontext context) {
  const bool bound = ctx_set_current.get()(context) == CUDA_SUCCESS;
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || queued_.has_value(); });
    if (stopping_) return;
    const core::HintPlan batch = std::move(*queued_);
    queued_.reset();
    lock.unlock();
    if (bound) work_(batch);
    lock.lock();
    in_flight_ = 0;
  }
}

bool DriverHintExecutor::Lane::try_hand_over(core::HintPlan batch, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  if (!thread_.joinable() || stopping_ || in_flight_ != 0) return false;
  queued_ = std::move(batch);
  in_flight_ = std::max<std::uint64_t>(bytes, 1);
  wake_.notify_one();
  return true;
}

std::uint64_t DriverHintExecutor::Lane::in_flight_bytes() {
  std::lock_guard lock(mutex_);
  return in_flight_;
}

void DriverHintExecutor::Lane::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool DriverHintExecutor::submit(const core::HintPlan& plan) {
  bool ok = true;
  if (!plan.discard.empty() || !plan.evict.empty()) {
    ok = eviction_lane_.try_hand_over(core::HintPlan{plan.discard, plan.evict, {}},
                                      plan.evict_bytes() + core::total_bytes(plan.discard));
  }
  if (!plan.prefetch.empty()) {
    ok = prefetch_lane_.try_hand_over(core::HintPlan{{}, {}, plan.prefetch}, plan.prefetch_bytes()) && ok;
  }
  return ok;
}

void DriverHintExecutor::run_evictions(const core::HintPlan& batch) {
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  if (!discard(batch.discard, stream_) || !prefetch(batch.evict, host, stream_)) return;
  // Done means moved: only then is the room there for the next prefetches.
  if (CUresult r = stream_synchronize.get()(stream_); r != CUDA_SUCCESS)
    fail(describe("cuStreamSynchronize", r));
}

void DriverHintExecutor::run_prefetches(const core::HintPlan& batch) {
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device_;
  if (!prefetch(batch.prefetch, gpu, prefetch_stream_)) return;
  if (CUresult r = stream_synchronize.get()(prefetch_stream_); r != CUDA_SUCCESS)
    fail(describe("cuStreamSynchronize", r));
}

bool DriverHintExecutor::prefetch(std::span<const core::AddressRange> ranges, CUmemLocation location,
                                  CUstream stream) {
  if (ranges.empty()) return true;
  // One batched call moves many ranges for the host cost of one (~100 us a call).
  if (batch_supported_ && prefetch_batch.get() != nullptr) {
    BatchRanges batch(ranges);
    size_t location_index = 0;
    const CUresult r = prefetch_batch.get()(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(),
                                            &location, &location_index, 1, 0, stream);
    if (r == CUDA_SUCCESS) return true;
    if (r != CUDA_ERROR_NOT_SUPPORTED) return fail(describe("cuMemPrefetchBatchAsync", r));
    batch_supported_ = false;
  }
  for (const core::AddressRange& range : ranges) {
    const CUresult r =
        prefetch_async.get()(static_cast<CUdeviceptr>(range.address), range.bytes, location, 0, stream);
    if (r != CUDA_SUCCESS) return fail(describe("cuMemPrefetchAsync", r));
  }
  return true;
}

bool DriverHintExecutor::evict_to_host(std::span<const core::AddressRange> ranges) {
  if (stream_ == nullptr) return false;
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  if (!prefetch(ranges, host, stream_)) return false;
  // Waiting here blocks only deepum's worker; the residency it reports is then true.
  if (CUresult r = stream_synchronize.get()(stream_); r != CUDA_SUCCESS)
    return fail(describe("cuStreamSynchronize", r));
  return true;
}

bool DriverHintExecutor::discard(std::span<const core::AddressRange> ranges, CUstream stream) {
  if (ranges.empty()) return true;
  auto fn = discard_batch.get();
  if (fn == nullptr) return fail("cuMemDiscardBatchAsync is missing (a CUDA 13 driver has it)");
  BatchRanges batch(ranges);
  if (CUresult r = fn(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(), 0, stream);
      r != CUDA_SUCCESS)
    return fail(describe("cuMemDiscardBatchAsync", r));
  return true;
}

BatchRanges::BatchRanges(std::span<const core::AddressRange> ranges) {
  pointers.reserve(ranges.size());
  sizes.reserve(ranges.size());
  for (const core::AddressRange& range : ranges) {
    pointers.push_back(static_cast<CUdeviceptr>(range.address));
    sizes.push_back(range.bytes);
  }
}

bool DriverHintExecutor::fail(std::string error) {
  if (!failure_logged_.exchange(true)) {
    core::logger().warn("the driver refused a hint ({}); later refusals are only counted", error);
  }
  return false;
}

std::optional<std::uint64_t> DriverHintExecutor::device_used_bytes() {
  size_t free_bytes = 0, total = 0;
  auto fn = mem_get_info.get();
  if (fn == nullptr || fn(&free_bytes, &total) != CUDA_SUCCESS) return std::nullopt;
  return total - free_bytes;
}

std::string place_on_host(std::uint64_t address, std::uint64_t bytes, bool prefer_host, bool map_for_gpu) {
  // A stream of deepum's in the current context, made again when the context changed. Known by the
  // context's ID, not its handle: the primary context made after a cudaDeviceReset has the old
  // handle, and the old stream died with the old context (using it crashes inside the driver).
  // No lock is held across the move and the wait below.
  struct Placing {
    unsigned long long context_id = 0;
    CUstream stream = nullptr;
  };
  static std::mutex made_mutex;  // guards `made` alone, never held across a driver call
  static Placing made;
  CUcontext context = nullptr;
  unsigned long long context_id = 0;
  if (ctx_get_current.get() == nullptr || ctx_get_current.get()(&context) != CUDA_SUCCESS ||
      context == nullptr || ctx_get_id.get() == nullptr ||
      ctx_get_id.get()(context, &context_id) != CUDA_SUCCESS)
    return "no current context";
  CUstream stream = nullptr;
  {
    std::lock_guard lock(made_mutex);
    if (made.context_id == context_id) stream = made.stream;
  }
  if (stream == nullptr) {
    if (CUresult r = stream_create.get()(&stream, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
      return describe("cuStreamCreate", r);
    std::lock_guard lock(made_mutex);
    made = {context_id, stream};  // a racing maker's stream stays with its context
  }
  // A synchronize while a stream capture runs would invalidate it: the range stays where the driver
  // put it (nowhere yet: it is placed on first touch).
  core::GateEntry gate;
  if (!gate) return {};
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  if (CUresult r = prefetch_async.get()(static_cast<CUdeviceptr>(address), bytes, host, 0, stream);
      r != CUDA_SUCCESS) {
    return describe("cuMemPrefetchAsync", r);
  }
  if (CUresult r = stream_synchronize.get()(stream); r != CUDA_SUCCESS)
    return describe("cuStreamSynchronize", r);
  if (!prefer_host) return {};
  const auto pointer = static_cast<CUdeviceptr>(address);
  if (CUresult r = mem_advise.get()(pointer, bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, host);
      r != CUDA_SUCCESS)
    return describe("cuMemAdvise(preferred location host)", r);
  if (!map_for_gpu) return {};
  CUdevice device = 0;
  if (CUresult r = ctx_get_device.get()(&device); r != CUDA_SUCCESS) return describe("cuCtxGetDevice", r);
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device;
  if (CUresult r = mem_advise.get()(pointer, bytes, CU_MEM_ADVISE_SET_ACCESSED_BY, gpu); r != CUDA_SUCCESS)
    return describe("cuMemAdvise(accessed by the GPU)", r);
  return {};
}

}  // namespace deepum::cuda
