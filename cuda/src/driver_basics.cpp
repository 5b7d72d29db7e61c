#include "deepum/cuda/driver_basics.hpp"

#include <mutex>

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

BatchRanges::BatchRanges(std::span<const core::AddressRange> ranges) {
  pointers.reserve(ranges.size());
  sizes.reserve(ranges.size());
  for (const core::AddressRange& range : ranges) {
    pointers.push_back(static_cast<CUdeviceptr>(range.address));
    sizes.push_back(range.bytes);
  }
}

std::optional<std::uint64_t> device_used_bytes() {
  size_t free_bytes = 0, total = 0;
  auto fn = mem_get_info.get();
  if (fn == nullptr || fn(&free_bytes, &total) != CUDA_SUCCESS) return std::nullopt;
  return total - free_bytes;
}

std::string place_on_host(std::uint64_t address, std::uint64_t bytes) {
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
  return {};
}

}  // namespace deepum::cuda
