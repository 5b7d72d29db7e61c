#include "deepum/cupti_tracer/activity_decoder.hpp"

#include <cstddef>
#include <cstring>

namespace deepum::cupti_tracer {
namespace {

using Kernel = CUpti_ActivityKernel10;
using UmCounter = CUpti_ActivityUnifiedMemoryCounter3;
using Memcpy = CUpti_ActivityMemcpy6;
using Memset = CUpti_ActivityMemset4;

// An older libcupti emits older record versions; the fields we read must sit where we read them.
#define DEEPUM_SAME_OFFSET(newer, older, field) \
  static_assert(offsetof(newer, field) == offsetof(older, field), #field " moved between record versions")
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel9, start);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel9, end);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel9, deviceId);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel9, streamId);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel9, correlationId);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel9, name);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel4, start);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel4, end);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel4, deviceId);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel4, streamId);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel4, correlationId);
DEEPUM_SAME_OFFSET(Kernel, CUpti_ActivityKernel4, name);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, counterKind);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, value);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, start);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, end);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, address);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, srcId);
DEEPUM_SAME_OFFSET(UmCounter, CUpti_ActivityUnifiedMemoryCounter2, flags);
// Every memcpy record since the first (CUpti_ActivityMemcpy) starts with the same fields.
#define DEEPUM_SAME_MEMCPY_OFFSETS(older)      \
  DEEPUM_SAME_OFFSET(Memcpy, older, copyKind); \
  DEEPUM_SAME_OFFSET(Memcpy, older, bytes);    \
  DEEPUM_SAME_OFFSET(Memcpy, older, start);    \
  DEEPUM_SAME_OFFSET(Memcpy, older, end);      \
  DEEPUM_SAME_OFFSET(Memcpy, older, deviceId); \
  DEEPUM_SAME_OFFSET(Memcpy, older, streamId); \
  DEEPUM_SAME_OFFSET(Memcpy, older, correlationId)
DEEPUM_SAME_MEMCPY_OFFSETS(CUpti_ActivityMemcpy5);
DEEPUM_SAME_MEMCPY_OFFSETS(CUpti_ActivityMemcpy4);
DEEPUM_SAME_MEMCPY_OFFSETS(CUpti_ActivityMemcpy3);
DEEPUM_SAME_MEMCPY_OFFSETS(CUpti_ActivityMemcpy);
#undef DEEPUM_SAME_MEMCPY_OFFSETS
// Likewise every memset record since CUpti_ActivityMemset.
#define DEEPUM_SAME_MEMSET_OFFSETS(older)      \
  DEEPUM_SAME_OFFSET(Memset, older, bytes);    \
  DEEPUM_SAME_OFFSET(Memset, older, start);    \
  DEEPUM_SAME_OFFSET(Memset, older, end);      \
  DEEPUM_SAME_OFFSET(Memset, older, deviceId); \
  DEEPUM_SAME_OFFSET(Memset, older, streamId); \
  DEEPUM_SAME_OFFSET(Memset, older, correlationId)
DEEPUM_SAME_MEMSET_OFFSETS(CUpti_ActivityMemset3);
DEEPUM_SAME_MEMSET_OFFSETS(CUpti_ActivityMemset2);
DEEPUM_SAME_MEMSET_OFFSETS(CUpti_ActivityMemset);
#undef DEEPUM_SAME_MEMSET_OFFSETS
#undef DEEPUM_SAME_OFFSET
static_assert(sizeof(Memcpy::copyKind) == sizeof(std::uint8_t));
static_assert(sizeof(CUpti_ActivityKind) == sizeof(std::uint32_t));
static_assert(sizeof(CUpti_ActivityUnifiedMemoryCounterKind) == sizeof(std::uint32_t));

// Records are packed; reading through memcpy needs no alignment and no aliasing exemption.
template <typename T>
T read_at(const unsigned char* base, std::size_t offset) noexcept {
  T value;
  std::memcpy(&value, base + offset, sizeof(T));
  return value;
}

#define DEEPUM_FIELD(type, record, field) read_at<type>(bytes, offsetof(record, field))

core::KernelExecution decode_kernel(const unsigned char* bytes) noexcept {
  core::KernelExecution out;
  out.correlation_id = DEEPUM_FIELD(std::uint32_t, Kernel, correlationId);
  out.start = DEEPUM_FIELD(std::uint64_t, Kernel, start);
  out.end = DEEPUM_FIELD(std::uint64_t, Kernel, end);
  out.stream_id = DEEPUM_FIELD(std::uint32_t, Kernel, streamId);
  out.device = DEEPUM_FIELD(std::uint32_t, Kernel, deviceId);
  // CUPTI's name for the kernel, shared by its records; read in the buffer callback.
  const char* name = DEEPUM_FIELD(const char*, Kernel, name);
  if (name != nullptr && std::strcmp(name, core::kOwnCopyKernelName) == 0)
    out.correlation_id = core::kOwnKernelCorrelation;
  return out;
}

// A copy-engine operation: the fields it shares with a kernel, then its own.
core::KernelExecution decode_memcpy(const unsigned char* bytes) noexcept {
  core::KernelExecution out;
  out.correlation_id = DEEPUM_FIELD(std::uint32_t, Memcpy, correlationId);
  out.start = DEEPUM_FIELD(std::uint64_t, Memcpy, start);
  out.end = DEEPUM_FIELD(std::uint64_t, Memcpy, end);
  out.stream_id = DEEPUM_FIELD(std::uint32_t, Memcpy, streamId);
  out.device = DEEPUM_FIELD(std::uint32_t, Memcpy, deviceId);
  out.operation = core::GpuOperation::memcpy;
  out.copy_kind = DEEPUM_FIELD(std::uint8_t, Memcpy, copyKind);
  out.bytes = DEEPUM_FIELD(std::uint64_t, Memcpy, bytes);
  return out;
}

core::KernelExecution decode_memset(const unsigned char* bytes) noexcept {
  core::KernelExecution out;
  out.correlation_id = DEEPUM_FIELD(std::uint32_t, Memset, correlationId);
  out.start = DEEPUM_FIELD(std::uint64_t, Memset, start);
  out.end = DEEPUM_FIELD(std::uint64_t, Memset, end);
  out.stream_id = DEEPUM_FIELD(std::uint32_t, Memset, streamId);
  out.device = DEEPUM_FIELD(std::uint32_t, Memset, deviceId);
  out.operation = core::GpuOperation::memset;
  out.bytes = DEEPUM_FIELD(std::uint64_t, Memset, bytes);
  return out;
}

DecodedRecord decode_um_counter(const unsigned char* bytes, RecordClass& classified) noexcept {
  const auto counter_kind = DEEPUM_FIELD(std::uint32_t, UmCounter, counterKind);
  const auto value = DEEPUM_FIELD(std::uint64_t, UmCounter, value);
  const auto start = DEEPUM_FIELD(std::uint64_t, UmCounter, start);
  const auto end = DEEPUM_FIELD(std::uint64_t, UmCounter, end);
  const auto address = DEEPUM_FIELD(std::uint64_t, UmCounter, address);
  const auto flags = DEEPUM_FIELD(std::uint32_t, UmCounter, flags);
  switch (counter_kind) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT: {
      classified = RecordClass::page_fault;
      core::PageFault fault;
      fault.start = start;
      fault.end = end;
      fault.address = address;
      fault.fault_count = value != 0 ? value : 1;  // a record is at least one fault group
      fault.access = map_access_type(flags);
      fault.device = DEEPUM_FIELD(std::uint32_t, UmCounter, srcId);
      return fault;
    }
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH: {
      classified = RecordClass::migration;
      core::Migration migration;
      migration.start = start;
      migration.end = end;
      migration.address = address;
      migration.bytes = value;
      migration.direction = counter_kind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD
                                ? core::MigrationDirection::host_to_device
                                : core::MigrationDirection::device_to_host;
      migration.cause = map_migration_cause(flags);
      return migration;
    }
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING:
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP: {
      classified = RecordClass::driver_action;
      core::DriverAction action;
      action.kind = counter_kind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING
                        ? core::DriverAction::Kind::thrashing
                    : counter_kind == CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING
                        ? core::DriverAction::Kind::throttling
                        : core::DriverAction::Kind::remote_map;
      if (action.kind == core::DriverAction::Kind::remote_map) action.cause = map_remote_map_cause(flags);
      action.start = start;
      action.end = end;
      action.address = address;
      // Throttling's value is not a size.
      action.bytes = action.kind == core::DriverAction::Kind::throttling ? 0 : value;
      return action;
    }
    default:
      classified = RecordClass::other_um_counter;
      return std::monostate{};
  }
}

#undef DEEPUM_FIELD

}  // namespace

core::FaultAccess map_access_type(std::uint32_t flags) noexcept {
  switch (flags) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_READ:
      return core::FaultAccess::read;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE:
      return core::FaultAccess::write;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_ATOMIC:
      return core::FaultAccess::atomic;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_PREFETCH:
      return core::FaultAccess::prefetch;
    default:
      return core::FaultAccess::unknown;
  }
}

core::DriverAction::Cause map_remote_map_cause(std::uint32_t flags) noexcept {
  switch (flags) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_COHERENCE:
      return core::DriverAction::Cause::coherence;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_THRASHING:
      return core::DriverAction::Cause::thrashing;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_POLICY:
      return core::DriverAction::Cause::policy;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_OUT_OF_MEMORY:
      return core::DriverAction::Cause::out_of_memory;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_EVICTION:
      return core::DriverAction::Cause::eviction;
    default:
      return core::DriverAction::Cause::unknown;
  }
}

core::MigrationCause map_migration_cause(std::uint32_t flags) noexcept {
  switch (flags) {
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER:
      return core::MigrationCause::user;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE:
      return core::MigrationCause::coherence;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH:
      return core::MigrationCause::prefetch;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION:
      return core::MigrationCause::eviction;
    case CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS:
      return core::MigrationCause::access_counters;
    default:
      return core::MigrationCause::unknown;
  }
}

DecodedRecord decode_activity(const CUpti_Activity* record, RecordClass* classified) noexcept {
  RecordClass which = RecordClass::unknown_kind;
  DecodedRecord out;
  if (record != nullptr) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(record);
    switch (read_at<std::uint32_t>(bytes, offsetof(CUpti_Activity, kind))) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        which = RecordClass::kernel;
        out = decode_kernel(bytes);
        break;
      case CUPTI_ACTIVITY_KIND_MEMCPY:
        which = RecordClass::memcpy;
        out = decode_memcpy(bytes);
        break;
      case CUPTI_ACTIVITY_KIND_MEMSET:
        which = RecordClass::memset;
        out = decode_memset(bytes);
        break;
      case CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER:
        out = decode_um_counter(bytes, which);
        break;
      default:
        break;
    }
  }
  // A forced flush hands back records of work still queued or running, without both timestamps:
  // nothing can be attributed to them, and a migration without its times cannot be placed in the
  // residency replayed in time order.
  const auto incomplete = [](const auto& timed) { return timed.start == 0 || timed.end < timed.start; };
  if (const auto* execution = std::get_if<core::KernelExecution>(&out);
      execution != nullptr && incomplete(*execution)) {
    which = RecordClass::incomplete;
    out = std::monostate{};
  } else if (const auto* migration = std::get_if<core::Migration>(&out);
             migration != nullptr && incomplete(*migration)) {
    which = RecordClass::incomplete;
    out = std::monostate{};
  }
  if (classified != nullptr) *classified = which;
  return out;
}

DecodedRecord ActivityDecoder::decode(const CUpti_Activity* record) noexcept {
  RecordClass which = RecordClass::unknown_kind;
  DecodedRecord out = decode_activity(record, &which);
  by_class_[static_cast<std::size_t>(which)].fetch_add(1, std::memory_order_relaxed);
  if (record != nullptr) {
    std::uint32_t kind = 0;
    std::memcpy(&kind, record, sizeof(kind));
    if (kind < kTrackedKinds) by_kind_[kind].fetch_add(1, std::memory_order_relaxed);
  }
  return out;
}

DecoderCounts ActivityDecoder::counts() const noexcept {
  DecoderCounts out;
  for (std::size_t i = 0; i < out.by_class.size(); ++i)
    out.by_class[i] = by_class_[i].load(std::memory_order_relaxed);
  return out;
}

std::uint64_t ActivityDecoder::records_of_kind(std::uint32_t kind) const noexcept {
  return kind < kTrackedKinds ? by_kind_[kind].load(std::memory_order_relaxed) : 0;
}

}  // namespace deepum::cupti_tracer
