#include "deepum/cuda/own_moves.hpp"

#include <algorithm>
#include <vector>

#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/driver_functions.hpp"

namespace deepum::cuda {
using namespace driver;

namespace {
thread_local bool t_issuing = false;
}  // namespace

bool issuing_own_moves() { return t_issuing; }

OwnMovesScope::OwnMovesScope() : was_(t_issuing) { t_issuing = true; }
OwnMovesScope::~OwnMovesScope() { t_issuing = was_; }

bool Staging::allocate(bool with_kernel) {
  if (!asked_ && mem_alloc.get() != nullptr) {
    asked_ = true;
    if (mem_alloc.get()(&buffer_, kBytes) != CUDA_SUCCESS) buffer_ = 0;
    if (buffer_ != 0 && with_kernel) kernel_.load();
  }
  return buffer_ != 0;
}

namespace {

CUdeviceptr address(const void* pointer) {
  return static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(pointer));
}

CUmemLocation location(bool on_gpu, CUdevice device) {
  CUmemLocation where{};
  where.type = on_gpu ? CU_MEM_LOCATION_TYPE_DEVICE : CU_MEM_LOCATION_TYPE_HOST;
  where.id = on_gpu ? device : 0;
  return where;
}

// One batched call in stream order, the operands' locations hinted (they matter for managed
// memory only); copy by copy where the batch is refused as a whole.
CUresult copy_batch(const std::vector<DeviceCopy>& copies, CUmemLocation source, CUmemLocation destination,
                    CUstream on) {
  if (copies.empty()) return CUDA_SUCCESS;
  if (memcpy_batch_async.get() != nullptr) {
    std::vector<CUdeviceptr> destinations, sources;
    std::vector<size_t> sizes;
    destinations.reserve(copies.size());
    sources.reserve(copies.size());
    sizes.reserve(copies.size());
    for (const DeviceCopy& copy : copies) {
      destinations.push_back(copy.destination);
      sources.push_back(copy.source);
      sizes.push_back(copy.bytes);
    }
    CUmemcpyAttributes attributes{};
    attributes.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
    attributes.srcLocHint = source;
    attributes.dstLocHint = destination;
    size_t first = 0;
    const CUresult r = memcpy_batch_async.get()(destinations.data(), sources.data(), sizes.data(),
                                                sizes.size(), &attributes, &first, 1, on);
    if (r != CUDA_ERROR_NOT_SUPPORTED && r != CUDA_ERROR_INVALID_VALUE) return r;
  }
  if (memcpy_async.get() == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  for (const DeviceCopy& copy : copies) {
    if (CUresult r = memcpy_async.get()(copy.destination, copy.source, copy.bytes, on); r != CUDA_SUCCESS)
      return r;
  }
  return CUDA_SUCCESS;
}

// Between the buffer and managed blocks: by the buffer's kernel where it has one and takes every
// copy (a piece fits one launch), else one batched call.
CUresult within_gpu(const std::vector<DeviceCopy>& copies, const Staging& staging, CUmemLocation gpu,
                    CUstream on) {
  const bool by_kernel =
      staging.kernel().loaded() && std::all_of(copies.begin(), copies.end(), CopyKernel::takes);
  if (by_kernel && staging.kernel().launch(copies, on) == CUDA_SUCCESS) return CUDA_SUCCESS;
  return copy_batch(copies, gpu, gpu, on);
}

}  // namespace

CUresult copy_blocks(std::span<const BlockCopy> copies, bool to_store, CUdevice device, CUstream on,
                     const Staging* staging, SecondLane second) {
  const CUmemLocation gpu = location(true, device), host = location(false, device);
  std::vector<DeviceCopy> direct, inner;
  if (staging == nullptr || staging->buffer() == 0) {
    for (const BlockCopy& copy : copies) {
      direct.push_back(to_store ? DeviceCopy{address(copy.slot), copy.block, copy.bytes}
                                : DeviceCopy{copy.block, address(copy.slot), copy.bytes});
    }
    return to_store ? copy_batch(direct, gpu, host, on) : copy_batch(direct, host, gpu, on);
  }
  // Each block at its own 2 MB place in the buffer (the last of a range may be shorter).
  constexpr std::uint64_t kSlot = std::uint64_t{2} << 20;
  const std::size_t per_piece = Staging::kBytes / kSlot;
  const bool alternate = second.usable();
  for (std::size_t first = 0, piece = 0; first < copies.size(); first += per_piece, ++piece) {
    const bool beside = alternate && piece % 2 == 1;
    const Staging& through = beside ? *second.staging : *staging;
    const CUstream stream = beside ? second.stream : on;
    direct.clear();
    inner.clear();
    for (std::size_t i = first; i < std::min(copies.size(), first + per_piece); ++i) {
      const BlockCopy& copy = copies[i];
      const CUdeviceptr staged = through.buffer() + (i - first) * kSlot;
      direct.push_back(to_store ? DeviceCopy{address(copy.slot), staged, copy.bytes}
                                : DeviceCopy{staged, address(copy.slot), copy.bytes});
      inner.push_back(to_store ? DeviceCopy{staged, copy.block, copy.bytes}
                               : DeviceCopy{copy.block, staged, copy.bytes});
    }
    // Out: the blocks into the buffer, then the buffer into the store; back: the reverse.
    CUresult r = to_store ? within_gpu(inner, through, gpu, stream) : copy_batch(direct, host, gpu, stream);
    if (r == CUDA_SUCCESS)
      r = to_store ? copy_batch(direct, gpu, host, stream) : within_gpu(inner, through, gpu, stream);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

CUresult drop_after_copies(std::span<const core::AddressRange> blocks, CUstream on) {
  if (stream_synchronize.get() == nullptr || discard_batch.get() == nullptr) return CUDA_ERROR_NOT_SUPPORTED;
  if (CUresult r = stream_synchronize.get()(on); r != CUDA_SUCCESS) return r;
  BatchRanges batch(blocks);
  return discard_batch.get()(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(), 0, on);
}

}  // namespace deepum::cuda
