// Copies and memsets at their driver API entry (cuMemcpy*, cuMemsetD*): the memory they name and
// the stream they go to, read from the parameters CUPTI hands the callback. Copy engines fault
// managed memory in as kernels do, so evictions ordered before launches are ordered before these
// too. Pure decoding, unit-tested on fabricated parameters.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <optional>
#include <span>

#include "deepum/core/events.hpp"
#include "deepum/cupti_tracer/launch_scanner.hpp"

namespace deepum::cupti_tracer {

struct CopyCall {
  core::GpuOperation operation = core::GpuOperation::memcpy;
  std::uint64_t destination = 0;
  std::uint64_t source = 0;  // 0 for a memset
  std::uint64_t bytes = 0;   // a memset: elements times their size
  std::uint64_t stream = 0;  // the CUstream handle; a per-thread call on stream 0 names CU_STREAM_PER_THREAD
  // False for the copies not decoded (below): nothing above but the stream is filled in, and the
  // call may read or write managed memory.
  bool decoded = true;
  // A host-to-device call (cuMemcpyHtoD*), or one whose source the driver places by its address
  // (cuMemcpy, cuMemcpyAsync): `source` may be host memory.
  bool source_may_be_host = false;
  // A stream memory operation that waits on the GPU for a value (cuStreamWaitValue32/64, or a
  // cuStreamBatchMemOp holding such a wait): the value may come from work enqueued later.
  bool waits_for_value = false;
};

// Copies to the GPU this small may be tables of pointers a kernel then follows (PyTorch builds
// them in pinned memory for chunk_cat and split_with_sizes_copy): their source is read for managed
// pointers, kPointerTableChunkBytes at a time. FSDP2's tables outgrow 16 KiB (chunk_cat's grows
// with the reduce-scatter shard: about 4 KiB per MiB): one missed, its kernel reads and writes
// blocks deepum may have swapped out.
inline constexpr std::size_t kMaxPointerTableBytes = std::size_t{256} << 10;
inline constexpr std::size_t kPointerTableChunkBytes = 16384;

// The callbacks watched: the 1-D copies and memsets with 64-bit pointers, each with its
// per-thread-stream twin, decoded; and the copies of 2-D/3-D regions, from arrays, between devices
// and in batches, the 2-D memsets and the stream memory operations (writes and waits), seen but not
// decoded (they name regions or several ranges; PyTorch's training loop uses none of them): deepum
// only learns that they may write memory, and which of them wait for a value.
std::span<const CUpti_CallbackId> copy_callback_ids() noexcept;
// nullopt: not one of copy_callback_ids(), or no parameters; decoded false: one not decoded.
std::optional<CopyCall> decode_copy_call(CUpti_CallbackId cbid, const void* params) noexcept;
// The call's operands in managed memory.
core::CopyLaunch managed_operands(const CopyCall& call, const ManagedLookup& managed) noexcept;
// Where `call` copies host memory of at most kMaxPointerTableBytes into managed memory: the managed
// pointers its source holds (8-byte aligned words), with their extents, into `table`. The source
// is read with process_vm_readv, so memory the host cannot read is an error, not a crash. False:
// not such a copy, or its source could not be read.
bool pointers_in_host_source(const CopyCall& call, const ManagedLookup& managed,
                             AllLaunchPointers& table) noexcept;

}  // namespace deepum::cupti_tracer
