#include "deepum/cuda/own_moves.hpp"

#include <vector>

#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {
thread_local bool t_issuing = false;
}  // namespace

bool issuing_own_moves() { return t_issuing; }

OwnMovesScope::OwnMovesScope() : was_(t_issuing) { t_issuing = true; }
OwnMovesScope::~OwnMovesScope() { t_issuing = was_; }

CUresult copy_blocks(std::span<const BlockCopy> copies, bool to_store, CUdevice device, CUstream on) {
  if (copies.empty()) return CUDA_SUCCESS;
  if (memcpy_batch_async.get() != nullptr) {
    std::vector<CUdeviceptr> destinations, sources;
    std::vector<size_t> sizes;
    destinations.reserve(copies.size());
    sources.reserve(copies.size());
    sizes.reserve(copies.size());
    for (const BlockCopy& copy : copies) {
      const auto slot = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(copy.slot));
      destinations.push_back(to_store ? slot : static_cast<CUdeviceptr>(copy.block));
      sources.push_back(to_store ? static_cast<CUdeviceptr>(copy.block) : slot);
      sizes.push_back(copy.bytes);
    }
    CUmemcpyAttributes attributes{};
    attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    // Where the managed side is when the copy runs: on the GPU (a swapped block is placed there
    // before it is copied back).
    CUmemLocation gpu{}, host{};
    gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
    gpu.id = device;
    host.type = CU_MEM_LOCATION_TYPE_HOST;
    attributes.srcLocHint = to_store ? gpu : host;
    attributes.dstLocHint = to_store ? host : gpu;
    size_t first = 0;
    const CUresult r = memcpy_batch_async.get()(destinations.data(), sources.data(), sizes.data(),
                                                sizes.size(), &attributes, &first, 1, on);
    if (r != CUDA_ERROR_NOT_SUPPORTED && r != CUDA_ERROR_INVALID_VALUE) return r;
  }
  for (const BlockCopy& copy : copies) {
    const CUresult r =
        to_store ? memcpy_dtoh_async.get()(copy.slot, static_cast<CUdeviceptr>(copy.block), copy.bytes, on)
                 : memcpy_htod_async.get()(static_cast<CUdeviceptr>(copy.block), copy.slot, copy.bytes, on);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

}  // namespace deepum::cuda
