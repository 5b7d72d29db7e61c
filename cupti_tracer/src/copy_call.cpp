#include "deepum/cupti_tracer/copy_call.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <type_traits>  // the parameter structs come with cupti.h (generated_cuda_meta.h)

#include "deepum/core/stream_id.hpp"

namespace deepum::cupti_tracer {
namespace {

template <typename T>
std::uint64_t address_of(T value) noexcept {
  if constexpr (std::is_pointer_v<T>) {
    return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(value));
  } else {
    return static_cast<std::uint64_t>(value);
  }
}

std::uint64_t stream_of(CUstream stream, bool per_thread) noexcept {
  if (per_thread && stream == nullptr) stream = CU_STREAM_PER_THREAD;
  return core::stream_id(address_of(stream));
}

// The parameter structs name their operands dst/src, dstDevice/srcDevice or dstHost/srcHost.
template <typename Params>
CopyCall memcpy_of(const Params& p, bool per_thread) noexcept {
  CopyCall call;
  call.operation = core::GpuOperation::memcpy;
  if constexpr (requires { p.dst; }) {
    call.destination = address_of(p.dst);
  } else if constexpr (requires { p.dstDevice; }) {
    call.destination = address_of(p.dstDevice);
  } else {
    call.destination = address_of(p.dstHost);
  }
  if constexpr (requires { p.src; }) {
    call.source = address_of(p.src);
    call.source_may_be_host = true;
  } else if constexpr (requires { p.srcDevice; }) {
    call.source = address_of(p.srcDevice);
  } else {
    call.source = address_of(p.srcHost);
    call.source_may_be_host = true;
  }
  call.bytes = p.ByteCount;
  CUstream stream = nullptr;
  if constexpr (requires { p.hStream; }) stream = p.hStream;
  call.stream = stream_of(stream, per_thread);
  return call;
}

template <typename Params>
CopyCall memset_of(const Params& p, std::uint64_t element_bytes, bool per_thread) noexcept {
  CopyCall call;
  call.operation = core::GpuOperation::memset;
  call.destination = address_of(p.dstDevice);
  call.bytes = static_cast<std::uint64_t>(p.N) * element_bytes;
  CUstream stream = nullptr;
  if constexpr (requires { p.hStream; }) stream = p.hStream;
  call.stream = stream_of(stream, per_thread);
  return call;
}

// A call not decoded: only its stream, where it has one.
template <typename Params>
CopyCall undecoded_of(const Params& p, bool per_thread) noexcept {
  CopyCall call;
  call.decoded = false;
  CUstream stream = nullptr;
  if constexpr (requires { p.hStream; }) {
    stream = p.hStream;
  } else if constexpr (requires { p.stream; }) {
    stream = p.stream;
  }
  call.stream = stream_of(stream, per_thread);
  return call;
}

// A stream memory operation that waits on the GPU for a value (cuStreamWaitValue32/64).
template <typename Params>
CopyCall value_wait_of(const Params& p, bool per_thread) noexcept {
  CopyCall call = undecoded_of(p, per_thread);
  call.waits_for_value = true;
  return call;
}

// Past this many operations a batch is taken to hold a wait without reading further.
constexpr unsigned kBatchOperationsRead = 256;

// Whether a batch of stream memory operations holds a wait. Read as the driver will, but where
// the program passed memory it cannot read (the driver's error is the program's to get), an error
// here rather than a crash; then taken to wait. A few at a time, on the stack.
bool batch_waits(const CUstreamBatchMemOpParams* operations, unsigned count) noexcept {
  if (count > kBatchOperationsRead) return true;
  std::array<CUstreamBatchMemOpParams, 16> read{};
  const auto first = reinterpret_cast<std::uintptr_t>(operations);
  for (std::size_t at = 0; at < count; at += read.size()) {
    const std::size_t n = std::min<std::size_t>(read.size(), count - at);
    iovec local{read.data(), n * sizeof(CUstreamBatchMemOpParams)};
    iovec remote{reinterpret_cast<void*>(first + at * sizeof(CUstreamBatchMemOpParams)), local.iov_len};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(local.iov_len))
      return true;
    for (std::size_t i = 0; i < n; ++i) {
      if (read[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_32 ||
          read[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_64)
        return true;
    }
  }
  return false;
}

template <typename Params>
CopyCall batch_of(const Params& p, bool per_thread) noexcept {
  CopyCall call = undecoded_of(p, per_thread);
  call.waits_for_value = batch_waits(p.paramArray, p.count);
  return call;
}

constexpr CUpti_CallbackId kCopyCallbacks[] = {
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoHAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
    // Seen, not decoded: from kFirstUndecoded on.
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DUnaligned_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy2DAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3D_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeer_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyPeerAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeer_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DPeerAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyBatchAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpy3DBatchAsync_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoD_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemcpyAtoD_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32_v2_ptds,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async,
    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue32_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWriteValue64_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamBatchMemOp_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue32_v2_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2,
    CUPTI_DRIVER_TRACE_CBID_cuStreamWaitValue64_v2_ptsz,
};
constexpr std::size_t kFirstUndecoded = 28;  // the 1-D copies and memsets come first
static_assert(kCopyCallbacks[kFirstUndecoded - 1] == CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz);
static_assert(kCopyCallbacks[kFirstUndecoded] == CUPTI_DRIVER_TRACE_CBID_cuMemcpy2D_v2);

}  // namespace

std::span<const CUpti_CallbackId> copy_callback_ids() noexcept { return kCopyCallbacks; }

std::optional<CopyCall> decode_copy_call(CUpti_CallbackId cbid, const void* params) noexcept {
  if (params == nullptr) return std::nullopt;
    // Each case reads the parameters as the struct CUPTI documents for that callback.
#define DEEPUM_MEMCPY(name, per_thread) \
  case CUPTI_DRIVER_TRACE_CBID_##name:  \
    return memcpy_of(*static_cast<const name##_params*>(params), per_thread);
#define DEEPUM_UNDECODED(name, per_thread) \
  case CUPTI_DRIVER_TRACE_CBID_##name:     \
    return undecoded_of(*static_cast<const name##_params*>(params), per_thread);
#define DEEPUM_WAIT(name, per_thread)  \
  case CUPTI_DRIVER_TRACE_CBID_##name: \
    return value_wait_of(*static_cast<const name##_params*>(params), per_thread);
#define DEEPUM_BATCH(name, per_thread) \
  case CUPTI_DRIVER_TRACE_CBID_##name: \
    return batch_of(*static_cast<const name##_params*>(params), per_thread);
#define DEEPUM_MEMSET(name, element, per_thread) \
  case CUPTI_DRIVER_TRACE_CBID_##name:           \
    return memset_of(*static_cast<const name##_params*>(params), element, per_thread);
  switch (cbid) {
    DEEPUM_MEMCPY(cuMemcpy, false)
    DEEPUM_MEMCPY(cuMemcpy_ptds, true)
    DEEPUM_MEMCPY(cuMemcpyAsync, false)
    DEEPUM_MEMCPY(cuMemcpyAsync_ptsz, true)
    DEEPUM_MEMCPY(cuMemcpyHtoD_v2, false)
    DEEPUM_MEMCPY(cuMemcpyHtoD_v2_ptds, true)
    DEEPUM_MEMCPY(cuMemcpyDtoH_v2, false)
    DEEPUM_MEMCPY(cuMemcpyDtoH_v2_ptds, true)
    DEEPUM_MEMCPY(cuMemcpyDtoD_v2, false)
    DEEPUM_MEMCPY(cuMemcpyDtoD_v2_ptds, true)
    DEEPUM_MEMCPY(cuMemcpyHtoDAsync_v2, false)
    DEEPUM_MEMCPY(cuMemcpyHtoDAsync_v2_ptsz, true)
    DEEPUM_MEMCPY(cuMemcpyDtoHAsync_v2, false)
    DEEPUM_MEMCPY(cuMemcpyDtoHAsync_v2_ptsz, true)
    DEEPUM_MEMCPY(cuMemcpyDtoDAsync_v2, false)
    DEEPUM_MEMCPY(cuMemcpyDtoDAsync_v2_ptsz, true)
    DEEPUM_MEMSET(cuMemsetD8_v2, 1, false)
    DEEPUM_MEMSET(cuMemsetD8_v2_ptds, 1, true)
    DEEPUM_MEMSET(cuMemsetD16_v2, 2, false)
    DEEPUM_MEMSET(cuMemsetD16_v2_ptds, 2, true)
    DEEPUM_MEMSET(cuMemsetD32_v2, 4, false)
    DEEPUM_MEMSET(cuMemsetD32_v2_ptds, 4, true)
    DEEPUM_MEMSET(cuMemsetD8Async, 1, false)
    DEEPUM_MEMSET(cuMemsetD8Async_ptsz, 1, true)
    DEEPUM_MEMSET(cuMemsetD16Async, 2, false)
    DEEPUM_MEMSET(cuMemsetD16Async_ptsz, 2, true)
    DEEPUM_MEMSET(cuMemsetD32Async, 4, false)
    DEEPUM_MEMSET(cuMemsetD32Async_ptsz, 4, true)
    default:
      break;
  }
  switch (cbid) {
    DEEPUM_UNDECODED(cuMemcpy2D_v2, false)
    DEEPUM_UNDECODED(cuMemcpy2D_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemcpy2DUnaligned_v2, false)
    DEEPUM_UNDECODED(cuMemcpy2DUnaligned_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemcpy2DAsync_v2, false)
    DEEPUM_UNDECODED(cuMemcpy2DAsync_v2_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpy3D_v2, false)
    DEEPUM_UNDECODED(cuMemcpy3D_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemcpy3DAsync_v2, false)
    DEEPUM_UNDECODED(cuMemcpy3DAsync_v2_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpyPeer, false)
    DEEPUM_UNDECODED(cuMemcpyPeer_ptds, true)
    DEEPUM_UNDECODED(cuMemcpyPeerAsync, false)
    DEEPUM_UNDECODED(cuMemcpyPeerAsync_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpy3DPeer, false)
    DEEPUM_UNDECODED(cuMemcpy3DPeer_ptds, true)
    DEEPUM_UNDECODED(cuMemcpy3DPeerAsync, false)
    DEEPUM_UNDECODED(cuMemcpy3DPeerAsync_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpyBatchAsync, false)
    DEEPUM_UNDECODED(cuMemcpyBatchAsync_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpyBatchAsync_v2, false)
    DEEPUM_UNDECODED(cuMemcpyBatchAsync_v2_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpy3DBatchAsync, false)
    DEEPUM_UNDECODED(cuMemcpy3DBatchAsync_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpy3DBatchAsync_v2, false)
    DEEPUM_UNDECODED(cuMemcpy3DBatchAsync_v2_ptsz, true)
    DEEPUM_UNDECODED(cuMemcpyAtoD_v2, false)
    DEEPUM_UNDECODED(cuMemcpyAtoD_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemsetD2D8_v2, false)
    DEEPUM_UNDECODED(cuMemsetD2D8_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemsetD2D16_v2, false)
    DEEPUM_UNDECODED(cuMemsetD2D16_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemsetD2D32_v2, false)
    DEEPUM_UNDECODED(cuMemsetD2D32_v2_ptds, true)
    DEEPUM_UNDECODED(cuMemsetD2D8Async, false)
    DEEPUM_UNDECODED(cuMemsetD2D8Async_ptsz, true)
    DEEPUM_UNDECODED(cuMemsetD2D16Async, false)
    DEEPUM_UNDECODED(cuMemsetD2D16Async_ptsz, true)
    DEEPUM_UNDECODED(cuMemsetD2D32Async, false)
    DEEPUM_UNDECODED(cuMemsetD2D32Async_ptsz, true)
    DEEPUM_UNDECODED(cuStreamWriteValue32, false)
    DEEPUM_UNDECODED(cuStreamWriteValue32_ptsz, true)
    DEEPUM_UNDECODED(cuStreamWriteValue32_v2, false)
    DEEPUM_UNDECODED(cuStreamWriteValue32_v2_ptsz, true)
    DEEPUM_UNDECODED(cuStreamWriteValue64, false)
    DEEPUM_UNDECODED(cuStreamWriteValue64_ptsz, true)
    DEEPUM_UNDECODED(cuStreamWriteValue64_v2, false)
    DEEPUM_UNDECODED(cuStreamWriteValue64_v2_ptsz, true)
    DEEPUM_BATCH(cuStreamBatchMemOp, false)
    DEEPUM_BATCH(cuStreamBatchMemOp_ptsz, true)
    DEEPUM_BATCH(cuStreamBatchMemOp_v2, false)
    DEEPUM_BATCH(cuStreamBatchMemOp_v2_ptsz, true)
    DEEPUM_WAIT(cuStreamWaitValue32, false)
    DEEPUM_WAIT(cuStreamWaitValue32_ptsz, true)
    DEEPUM_WAIT(cuStreamWaitValue32_v2, false)
    DEEPUM_WAIT(cuStreamWaitValue32_v2_ptsz, true)
    DEEPUM_WAIT(cuStreamWaitValue64, false)
    DEEPUM_WAIT(cuStreamWaitValue64_ptsz, true)
    DEEPUM_WAIT(cuStreamWaitValue64_v2, false)
    DEEPUM_WAIT(cuStreamWaitValue64_v2_ptsz, true)
    default:
      return std::nullopt;
  }
#undef DEEPUM_MEMCPY
#undef DEEPUM_MEMSET
#undef DEEPUM_UNDECODED
#undef DEEPUM_WAIT
#undef DEEPUM_BATCH
}

core::CopyLaunch managed_operands(const CopyCall& call, const ManagedLookup& managed) noexcept {
  core::CopyLaunch copy;
  copy.stream = call.stream;
  copy.operation = call.operation;
  copy.bytes = call.bytes;
  for (std::uint64_t operand : {call.destination, call.source}) {
    if (operand != 0 && managed.contains(operand)) copy.operands[copy.operand_count++] = operand;
  }
  return copy;
}

bool pointers_in_host_source(const CopyCall& call, const ManagedLookup& managed,
                             AllLaunchPointers& table) noexcept {
  table.count = 0;
  table.complete = true;
  const bool small_table = call.operation == core::GpuOperation::memcpy && call.source_may_be_host &&
                           call.source != 0 && call.bytes >= sizeof(std::uint64_t) &&
                           call.bytes <= kMaxPointerTableBytes;
  if (!small_table || !managed.contains(call.destination) || managed.contains(call.source)) return false;
  thread_local std::array<unsigned char, kPointerTableChunkBytes> copy;
  PointerCollector collector(managed);
  const auto bytes = static_cast<std::size_t>(call.bytes);
  for (std::size_t at = 0; at < bytes; at += copy.size()) {
    const std::size_t chunk = std::min(copy.size(), bytes - at);
    iovec local{copy.data(), chunk};
    iovec remote{reinterpret_cast<void*>(static_cast<std::uintptr_t>(call.source + at)), chunk};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(chunk)) return false;
    scan_packed_buffer(copy.data(), chunk, collector);
  }
  const std::span<const std::uint64_t> found = collector.found();
  table.count = found.size();
  table.complete = collector.overflow() == 0;
  for (std::size_t i = 0; i < found.size(); ++i) {
    table.pointers[i] = found[i];
    table.extents[i] = managed.buffer_bytes(found[i]);
  }
  return true;
}

}  // namespace deepum::cupti_tracer
