// ActivityDecoder: CUPTI activity records -> the plain events of core/events.hpp. Pure: no CUPTI
// call, no state beyond counters, so the tests feed it fabricated records.
//
// Records handled:
// - CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL and CUPTI_ACTIVITY_KIND_KERNEL (CUpti_ActivityKernel10 in
//   CUDA 13; the fields read sit at the same offsets in every version since CUpti_ActivityKernel4)
//   -> KernelExecution.
// - CUPTI_ACTIVITY_KIND_MEMCPY (CUpti_ActivityMemcpy6 in CUDA 13; the fields read sit at the same
//   offsets in every version since CUpti_ActivityMemcpy) -> KernelExecution with operation memcpy,
//   bytes and copy_kind (CUpti_ActivityMemcpyKind). Peer-to-peer copies (MEMCPY2) are not decoded.
// - CUPTI_ACTIVITY_KIND_MEMSET (CUpti_ActivityMemset4; same offsets since CUpti_ActivityMemset)
//   -> KernelExecution with operation memset and bytes.
// - CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER (CUpti_ActivityUnifiedMemoryCounter3; same offsets in
//   CUpti_ActivityUnifiedMemoryCounter2):
//     GPU_PAGE_FAULT -> PageFault (access type from `flags`, fault groups from `value`,
//                       device from `srcId`),
//     BYTES_TRANSFER_HTOD / DTOH -> Migration (bytes from `value`, cause from `flags`).
//   Other counter kinds (CPU faults, thrashing, throttling, remote map, DtoD) are counted and dropped.
// Every other record kind is counted and ignored.
#pragma once

#include <cupti.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <variant>

#include "deepum/core/events.hpp"

namespace deepum::cupti_tracer {

// What one record became. monostate: nothing we use.
using DecodedRecord =
    std::variant<std::monostate, core::KernelExecution, core::PageFault, core::Migration, core::DriverAction>;

// How a record was classified, for the counters.
enum class RecordClass : std::uint8_t {
  kernel,            // -> KernelExecution
  memcpy,            // -> KernelExecution, operation memcpy
  memset,            // -> KernelExecution, operation memset
  incomplete,        // a kernel, copy, set or migration without both timestamps: dropped
  page_fault,        // -> PageFault
  migration,         // -> Migration
  driver_action,     // -> DriverAction (thrashing, throttling, remote map)
  other_um_counter,  // a unified-memory counter kind we do not use
  unknown_kind,      // an activity kind we do not use
  count
};

// Pure decoding of one record. `record` must point at a whole record of the kind it names (as
// cuptiActivityGetNextRecord returns them); fields are read with memcpy, so any alignment is fine.
DecodedRecord decode_activity(const CUpti_Activity* record, RecordClass* classified = nullptr) noexcept;

// The enum mappings, exposed for tests and the simulator.
core::FaultAccess map_access_type(std::uint32_t flags) noexcept;
core::MigrationCause map_migration_cause(std::uint32_t flags) noexcept;
core::DriverAction::Cause map_remote_map_cause(std::uint32_t flags) noexcept;

// Plain numbers, for TracerStats.
struct DecoderCounts {
  std::array<std::uint64_t, static_cast<std::size_t>(RecordClass::count)> by_class{};
  std::uint64_t total() const {
    std::uint64_t sum = 0;
    for (std::uint64_t n : by_class) sum += n;
    return sum;
  }
  std::uint64_t operator[](RecordClass c) const { return by_class[static_cast<std::size_t>(c)]; }
};

// decode_activity plus thread-safe counters (buffers can complete on several threads at once).
class ActivityDecoder {
 public:
  DecodedRecord decode(const CUpti_Activity* record) noexcept;
  DecoderCounts counts() const noexcept;
  // Records of each raw CUpti_ActivityKind below kTrackedKinds, whatever became of them.
  static constexpr std::size_t kTrackedKinds = 64;
  std::uint64_t records_of_kind(std::uint32_t kind) const noexcept;

 private:
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(RecordClass::count)> by_class_{};
  std::array<std::atomic<std::uint64_t>, kTrackedKinds> by_kind_{};
};

}  // namespace deepum::cupti_tracer
