#include "deepum/cuda/dead_memory_discarder.hpp"

#include "deepum/core/log.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/driver_hint_executor.hpp"

namespace deepum::cuda {
using namespace driver;

std::string DeadMemoryDiscarder::create() {
  if (stream_create.get() == nullptr || event_create.get() == nullptr || event_record.get() == nullptr ||
      stream_wait_event.get() == nullptr || stream_is_capturing.get() == nullptr ||
      discard_and_prefetch.get() == nullptr) {
    return "the driver lacks cuMemDiscardAndPrefetchBatchAsync or the event functions (CUDA 13 has them)";
  }
  if (CUresult r = stream_create.get()(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS)
    return describe("cuStreamCreate", r);
  if (CUresult r = event_create.get()(&program_done_, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS)
    return describe("cuEventCreate", r);
  if (CUresult r = event_create.get()(&discard_done_, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS)
    return describe("cuEventCreate", r);
  return {};
}

std::vector<core::AddressRange> DeadMemoryDiscarder::discard_returned_block(CUstream stream,
                                                                            std::uint64_t address,
                                                                            std::uint64_t bytes) noexcept {
  // Whole 2 MB blocks only: the rest of a partly covered one may belong to live neighbours.
  const std::uint64_t first = (address + core::kBlockBytes - 1) & ~(core::kBlockBytes - 1);
  const std::uint64_t end = (address + bytes) & ~(core::kBlockBytes - 1);
  if (stream_ == nullptr || end <= first) return {};
  // The legacy stream is never captured (and asking about it during another thread's global
  // capture would itself be an error).
  if (stream != nullptr) {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    if (stream_is_capturing.get()(stream, &status) != CUDA_SUCCESS ||
        status != CU_STREAM_CAPTURE_STATUS_NONE) {
      skipped_capturing_.fetch_add(1, std::memory_order_relaxed);
      return {};
    }
  }
  CUdeviceptr pointer = first;
  size_t size = end - first;
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  size_t location_index = 0;
  std::lock_guard lock(mutex_);
  CUresult r = event_record.get()(program_done_, stream);
  if (r == CUDA_SUCCESS) r = stream_wait_event.get()(stream_, program_done_, 0);
  if (r == CUDA_SUCCESS)
    r = discard_and_prefetch.get()(&pointer, &size, 1, &host, &location_index, 1, 0, stream_);
  if (r == CUDA_SUCCESS) r = event_record.get()(discard_done_, stream_);
  // Whatever happened above, the program's later work must not overtake a discard that may run.
  const CUresult wait = stream_wait_event.get()(stream, discard_done_, 0);
  if (r != CUDA_SUCCESS || wait != CUDA_SUCCESS) {
    if (failures_.fetch_add(1, std::memory_order_relaxed) == 0) {
      core::logger().warn("discarding freed memory failed ({}); later failures are only counted",
                          describe("", r != CUDA_SUCCESS ? r : wait));
    }
    return {};
  }
  discarded_bytes_.fetch_add(size, std::memory_order_relaxed);
  return {{first, size}};
}

}  // namespace deepum::cuda
