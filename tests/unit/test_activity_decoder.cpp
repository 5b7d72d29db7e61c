// The CUPTI activity decoder (records -> plain events), fed fabricated records: every record kind
// we use (kernels, memcpys, memsets, unified-memory counters), every fault access type and
// migration cause, and the kinds we ignore. Also the activity buffer pool, libcupti's search list,
// and the whole CuptiTracer driven through a fake CUPTI: none of it needs a GPU.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "deepum/core/capture_gate.hpp"
#include "deepum/cupti_tracer/activity_decoder.hpp"
#include "deepum/cupti_tracer/buffer_pool.hpp"
#include "deepum/cupti_tracer/cupti_library.hpp"
#include "deepum/cupti_tracer/cupti_tracer.hpp"

using namespace deepum;
using namespace deepum::cupti_tracer;

namespace {

template <typename Record>
const CUpti_Activity* as_activity(const Record& record) {
  return reinterpret_cast<const CUpti_Activity*>(&record);
}

CUpti_ActivityKernel10 kernel_record(CUpti_ActivityKind kind) {
  CUpti_ActivityKernel10 record;
  std::memset(&record, 0, sizeof(record));
  record.kind = kind;
  record.correlationId = 4242;
  record.start = 1'000'000;
  record.end = 1'250'000;
  record.streamId = 7;
  record.deviceId = 1;
  record.contextId = 3;
  record.gridX = 128;
  return record;
}

CUpti_ActivityUnifiedMemoryCounter3 um_record(CUpti_ActivityUnifiedMemoryCounterKind counter_kind,
                                              std::uint64_t value, std::uint32_t flags) {
  CUpti_ActivityUnifiedMemoryCounter3 record;
  std::memset(&record, 0, sizeof(record));
  record.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
  record.counterKind = counter_kind;
  record.value = value;
  record.start = 500;
  record.end = 900;
  record.address = 0x7f0000200000;
  record.srcId = 2;
  record.dstId = 0;
  record.streamId = 0xffffffffu;  // documented as invalid
  record.flags = flags;
  return record;
}

// A memcpy record of any version (they share the fields the decoder reads).
template <typename Record = CUpti_ActivityMemcpy6>
Record memcpy_record(std::uint8_t copy_kind, std::uint64_t bytes) {
  Record record;
  std::memset(&record, 0, sizeof(record));
  record.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  record.copyKind = copy_kind;
  record.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  record.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  record.bytes = bytes;
  record.start = 3'000'000;
  record.end = 3'400'000;
  record.deviceId = 1;
  record.contextId = 3;
  record.streamId = 13;
  record.correlationId = 777;
  record.runtimeCorrelationId = 778;
  return record;
}

template <typename Record = CUpti_ActivityMemset4>
Record memset_record(std::uint64_t bytes) {
  Record record;
  std::memset(&record, 0, sizeof(record));
  record.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  record.value = 0xab;
  record.bytes = bytes;
  record.start = 5'000'000;
  record.end = 5'010'000;
  record.deviceId = 2;
  record.contextId = 3;
  record.streamId = 14;
  record.correlationId = 888;
  record.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  return record;
}

}  // namespace

TEST_CASE("Kernel records (concurrent and serial) decode to KernelExecution") {
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_KERNEL}) {
    const CUpti_ActivityKernel10 record = kernel_record(kind);
    RecordClass classified = RecordClass::unknown_kind;
    const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
    CHECK(classified == RecordClass::kernel);
    const auto* execution = std::get_if<core::KernelExecution>(&decoded);
    REQUIRE(execution != nullptr);
    CHECK(execution->correlation_id == 4242);
    CHECK(execution->start == 1'000'000);
    CHECK(execution->end == 1'250'000);
    CHECK(execution->stream_id == 7);
    CHECK(execution->device == 1);
    CHECK(execution->operation == core::GpuOperation::kernel);
    CHECK(execution->copy_kind == 0);
    CHECK(execution->bytes == 0);
  }
}

TEST_CASE("deepum's own copy kernel decodes with no correlation id, marked as deepum's") {
  // Launched within the callback of a program's launch, its records carry that launch's id.
  CUpti_ActivityKernel10 record = kernel_record(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  record.name = core::kOwnCopyKernelName;
  const DecodedRecord own = decode_activity(as_activity(record));
  const auto* execution = std::get_if<core::KernelExecution>(&own);
  REQUIRE(execution != nullptr);
  CHECK(execution->deepums_own());
  CHECK(execution->correlation_id == core::kOwnKernelCorrelation);
  CHECK(execution->stream_id == 7);
  const std::string program_name = "deepum_copy_within_gpu_of_the_program";  // only the exact name is ours
  record.name = program_name.c_str();
  const DecodedRecord other = decode_activity(as_activity(record));
  REQUIRE(std::get_if<core::KernelExecution>(&other) != nullptr);
  CHECK_FALSE(std::get<core::KernelExecution>(other).deepums_own());
  CHECK(std::get<core::KernelExecution>(other).correlation_id == 4242);
}

TEST_CASE(
    "A kernel or copy record without both timestamps (a forced flush) is classed incomplete, not used") {
  CUpti_ActivityKernel10 running = kernel_record(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  running.end = 0;  // handed over before the kernel ended
  CUpti_ActivityKernel10 queued = kernel_record(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  queued.start = 0;
  queued.end = 0;
  auto copy = memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096);
  copy.end = 0;
  // A migration without times could not be placed in the residency replayed in time order.
  const auto migration = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD, 2u << 20,
                                   CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER);
  CHECK(std::holds_alternative<core::Migration>(decode_activity(as_activity(migration))));
  auto timeless = migration;
  timeless.start = 0;
  for (const CUpti_Activity* record :
       {as_activity(running), as_activity(queued), as_activity(copy), as_activity(timeless)}) {
    RecordClass classified = RecordClass::kernel;
    const DecodedRecord decoded = decode_activity(record, &classified);
    CHECK(classified == RecordClass::incomplete);
    CHECK(std::holds_alternative<std::monostate>(decoded));
  }
  ActivityDecoder decoder;
  decoder.decode(as_activity(running));
  decoder.decode(as_activity(kernel_record(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)));
  CHECK(decoder.counts()[RecordClass::incomplete] == 1);
  CHECK(decoder.counts()[RecordClass::kernel] == 1);
}

TEST_CASE("Memcpy records (CUpti_ActivityMemcpy6) decode to a KernelExecution of operation memcpy") {
  for (const std::uint8_t copy_kind : std::initializer_list<std::uint8_t>{
           CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
           CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD}) {
    CAPTURE(static_cast<int>(copy_kind));
    auto record = memcpy_record(copy_kind, std::uint64_t{4} << 20);
    record.copyCount = 1;
    record.graphNodeId = 99;
    RecordClass classified = RecordClass::unknown_kind;
    const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
    CHECK(classified == RecordClass::memcpy);
    const auto* execution = std::get_if<core::KernelExecution>(&decoded);
    REQUIRE(execution != nullptr);
    CHECK(execution->operation == core::GpuOperation::memcpy);
    CHECK(execution->copy_kind == copy_kind);
    CHECK(execution->bytes == (std::uint64_t{4} << 20));
    CHECK(execution->correlation_id == 777);  // the API call's, not runtimeCorrelationId
    CHECK(execution->start == 3'000'000);
    CHECK(execution->end == 3'400'000);
    CHECK(execution->stream_id == 13);
    CHECK(execution->device == 1);
  }
}

TEST_CASE(
    "Older memcpy record versions (CUpti_ActivityMemcpy5, CUpti_ActivityMemcpy) decode the same fields") {
  const auto check = [](const CUpti_Activity* record) {
    const DecodedRecord decoded = decode_activity(record);
    const auto* execution = std::get_if<core::KernelExecution>(&decoded);
    REQUIRE(execution != nullptr);
    CHECK(execution->operation == core::GpuOperation::memcpy);
    CHECK(execution->copy_kind == std::uint8_t{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD});
    CHECK(execution->bytes == 1000);
    CHECK(execution->correlation_id == 777);
    CHECK(execution->start == 3'000'000);
    CHECK(execution->end == 3'400'000);
    CHECK(execution->stream_id == 13);
    CHECK(execution->device == 1);
  };
  const auto v5 = memcpy_record<CUpti_ActivityMemcpy5>(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1000);
  check(as_activity(v5));
  const auto v1 = memcpy_record<CUpti_ActivityMemcpy>(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1000);
  check(as_activity(v1));
}

TEST_CASE(
    "Memset records (CUpti_ActivityMemset4 and older) decode to a KernelExecution of operation memset") {
  const auto check = [](const CUpti_Activity* record) {
    RecordClass classified = RecordClass::unknown_kind;
    const DecodedRecord decoded = decode_activity(record, &classified);
    CHECK(classified == RecordClass::memset);
    const auto* execution = std::get_if<core::KernelExecution>(&decoded);
    REQUIRE(execution != nullptr);
    CHECK(execution->operation == core::GpuOperation::memset);
    CHECK(execution->copy_kind == 0);
    CHECK(execution->bytes == (std::uint64_t{1} << 20));
    CHECK(execution->correlation_id == 888);
    CHECK(execution->start == 5'000'000);
    CHECK(execution->end == 5'010'000);
    CHECK(execution->stream_id == 14);
    CHECK(execution->device == 2);
  };
  const auto v4 = memset_record(std::uint64_t{1} << 20);
  check(as_activity(v4));
  const auto v3 = memset_record<CUpti_ActivityMemset3>(std::uint64_t{1} << 20);
  check(as_activity(v3));
  const auto v1 = memset_record<CUpti_ActivityMemset>(std::uint64_t{1} << 20);
  check(as_activity(v1));
}

TEST_CASE("An older kernel record version (CUpti_ActivityKernel9) decodes the same fields") {
  CUpti_ActivityKernel9 record;
  std::memset(&record, 0, sizeof(record));
  record.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  record.correlationId = 99;
  record.start = 10;
  record.end = 20;
  record.streamId = 5;
  record.deviceId = 0;
  const DecodedRecord decoded = decode_activity(as_activity(record));
  const auto* execution = std::get_if<core::KernelExecution>(&decoded);
  REQUIRE(execution != nullptr);
  CHECK(execution->correlation_id == 99);
  CHECK(execution->start == 10);
  CHECK(execution->end == 20);
  CHECK(execution->stream_id == 5);
}

TEST_CASE("GPU page-fault records decode to PageFault with every access type") {
  struct Case {
    std::uint32_t flags;
    core::FaultAccess access;
  };
  const Case cases[] = {
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_UNKNOWN, core::FaultAccess::unknown},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_READ, core::FaultAccess::read},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE, core::FaultAccess::write},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_ATOMIC, core::FaultAccess::atomic},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_PREFETCH, core::FaultAccess::prefetch},
      {77, core::FaultAccess::unknown},  // a value a future CUPTI might add
  };
  for (const Case& c : cases) {
    CAPTURE(c.flags);
    const auto record = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 3, c.flags);
    RecordClass classified = RecordClass::unknown_kind;
    const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
    CHECK(classified == RecordClass::page_fault);
    const auto* fault = std::get_if<core::PageFault>(&decoded);
    REQUIRE(fault != nullptr);
    CHECK(fault->access == c.access);
    CHECK(fault->address == 0x7f0000200000);
    CHECK(fault->fault_count == 3);
    CHECK(fault->start == 500);
    CHECK(fault->end == 900);
    CHECK(fault->device == 2);
    CHECK(map_access_type(c.flags) == c.access);
  }
}

TEST_CASE("A page-fault record with a zero count still counts as one fault group") {
  const auto record = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 0,
                                CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_READ);
  const DecodedRecord decoded = decode_activity(as_activity(record));
  REQUIRE(std::holds_alternative<core::PageFault>(decoded));
  CHECK(std::get<core::PageFault>(decoded).fault_count == 1);
}

TEST_CASE("Transfer records decode to Migration with direction and every cause") {
  struct Case {
    std::uint32_t flags;
    core::MigrationCause cause;
  };
  const Case cases[] = {
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_UNKNOWN, core::MigrationCause::unknown},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_USER, core::MigrationCause::user},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE, core::MigrationCause::coherence},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_PREFETCH, core::MigrationCause::prefetch},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_EVICTION, core::MigrationCause::eviction},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_ACCESS_COUNTERS, core::MigrationCause::access_counters},
      {1234, core::MigrationCause::unknown},
  };
  struct Direction {
    CUpti_ActivityUnifiedMemoryCounterKind kind;
    core::MigrationDirection direction;
  };
  const Direction directions[] = {
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD,
       core::MigrationDirection::host_to_device},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH,
       core::MigrationDirection::device_to_host},
  };
  for (const Direction& d : directions) {
    for (const Case& c : cases) {
      CAPTURE(c.flags);
      const auto record = um_record(d.kind, 2u << 20, c.flags);
      RecordClass classified = RecordClass::unknown_kind;
      const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
      CHECK(classified == RecordClass::migration);
      const auto* migration = std::get_if<core::Migration>(&decoded);
      REQUIRE(migration != nullptr);
      CHECK(migration->direction == d.direction);
      CHECK(migration->cause == c.cause);
      CHECK(migration->bytes == (2u << 20));
      CHECK(migration->address == 0x7f0000200000);
      CHECK(migration->start == 500);
      CHECK(migration->end == 900);
      CHECK(map_migration_cause(c.flags) == c.cause);
    }
  }
}

TEST_CASE(
    "Thrashing, throttling and remote-map records decode to DriverAction, with every remote-map cause") {
  using Kind = core::DriverAction::Kind;
  using Cause = core::DriverAction::Cause;
  {
    const auto record = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, 2u << 20, 0);
    RecordClass classified = RecordClass::unknown_kind;
    const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
    CHECK(classified == RecordClass::driver_action);
    const auto* action = std::get_if<core::DriverAction>(&decoded);
    REQUIRE(action != nullptr);
    CHECK(action->kind == Kind::thrashing);
    CHECK(action->bytes == (2u << 20));
    CHECK(action->address == 0x7f0000200000);
    CHECK(action->start == 500);
    CHECK(action->end == 900);
  }
  {
    // Throttling's value is no size: the action carries no bytes.
    const auto record = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THROTTLING, 77, 0);
    const DecodedRecord decoded = decode_activity(as_activity(record));
    const auto* action = std::get_if<core::DriverAction>(&decoded);
    REQUIRE(action != nullptr);
    CHECK(action->kind == Kind::throttling);
    CHECK(action->bytes == 0);
  }
  const std::pair<std::uint32_t, Cause> causes[] = {
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_UNKNOWN, Cause::unknown},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_COHERENCE, Cause::coherence},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_THRASHING, Cause::thrashing},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_POLICY, Cause::policy},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_OUT_OF_MEMORY, Cause::out_of_memory},
      {CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_EVICTION, Cause::eviction},
      {99, Cause::unknown},
  };
  for (const auto& [flags, cause] : causes) {
    CAPTURE(flags);
    const auto record = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP, 64u << 10, flags);
    const DecodedRecord decoded = decode_activity(as_activity(record));
    const auto* action = std::get_if<core::DriverAction>(&decoded);
    REQUIRE(action != nullptr);
    CHECK(action->kind == Kind::remote_map);
    CHECK(action->cause == cause);
    CHECK(action->bytes == (64u << 10));
    CHECK(map_remote_map_cause(flags) == cause);
  }
}

TEST_CASE("Unified-memory counter kinds we do not use are classified and dropped") {
  for (CUpti_ActivityUnifiedMemoryCounterKind kind :
       {CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_UNKNOWN,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_CPU_PAGE_FAULT_COUNT,
        CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOD}) {
    CAPTURE(static_cast<int>(kind));
    const auto record = um_record(kind, 1, 0);
    RecordClass classified = RecordClass::unknown_kind;
    const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
    CHECK(std::holds_alternative<std::monostate>(decoded));
    CHECK(classified == RecordClass::other_um_counter);
  }
}

TEST_CASE("Activity kinds we do not use are ignored") {
  for (CUpti_ActivityKind kind :
       {CUPTI_ACTIVITY_KIND_INVALID, CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_DRIVER,
        CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_OVERHEAD,
        static_cast<CUpti_ActivityKind>(0x7ffffff0)}) {
    CAPTURE(static_cast<int>(kind));
    CUpti_ActivityKernel10 record = kernel_record(CUPTI_ACTIVITY_KIND_KERNEL);  // big enough for any read
    record.kind = kind;
    RecordClass classified = RecordClass::kernel;
    const DecodedRecord decoded = decode_activity(as_activity(record), &classified);
    CHECK(std::holds_alternative<std::monostate>(decoded));
    CHECK(classified == RecordClass::unknown_kind);
  }
  RecordClass classified = RecordClass::kernel;
  CHECK(std::holds_alternative<std::monostate>(decode_activity(nullptr, &classified)));
  CHECK(classified == RecordClass::unknown_kind);
}

TEST_CASE("Records are read without relying on their alignment") {
  const auto record = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 2,
                                CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_WRITE);
  alignas(16) unsigned char storage[sizeof(record) + 8];
  std::memcpy(storage + 4, &record, sizeof(record));
  const DecodedRecord decoded = decode_activity(reinterpret_cast<const CUpti_Activity*>(storage + 4));
  REQUIRE(std::holds_alternative<core::PageFault>(decoded));
  CHECK(std::get<core::PageFault>(decoded).access == core::FaultAccess::write);
  CHECK(std::get<core::PageFault>(decoded).address == 0x7f0000200000);
}

TEST_CASE("ActivityDecoder counts records by class and by raw kind, across threads") {
  ActivityDecoder decoder;
  const auto kernel = kernel_record(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  const auto fault = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT, 1, 1);
  const auto migration = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_DTOH, 4096, 4);
  const auto thrashing = um_record(CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_THRASHING, 1, 0);
  const auto copy = memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096);
  const auto set = memset_record(4096);
  auto driver_record = kernel_record(CUPTI_ACTIVITY_KIND_KERNEL);
  driver_record.kind = CUPTI_ACTIVITY_KIND_DRIVER;

  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 250; ++i) {
        decoder.decode(as_activity(kernel));
        decoder.decode(as_activity(fault));
        decoder.decode(as_activity(migration));
        decoder.decode(as_activity(thrashing));
        decoder.decode(as_activity(copy));
        decoder.decode(as_activity(set));
        decoder.decode(as_activity(driver_record));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const DecoderCounts counts = decoder.counts();
  CHECK(counts[RecordClass::kernel] == 1000);
  CHECK(counts[RecordClass::page_fault] == 1000);
  CHECK(counts[RecordClass::migration] == 1000);
  CHECK(counts[RecordClass::driver_action] == 1000);
  CHECK(counts[RecordClass::memcpy] == 1000);
  CHECK(counts[RecordClass::memset] == 1000);
  CHECK(counts[RecordClass::unknown_kind] == 1000);
  CHECK(counts.total() == 7000);
  CHECK(decoder.records_of_kind(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1000);
  CHECK(decoder.records_of_kind(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) == 3000);
  CHECK(decoder.records_of_kind(CUPTI_ACTIVITY_KIND_MEMCPY) == 1000);
  CHECK(decoder.records_of_kind(CUPTI_ACTIVITY_KIND_MEMSET) == 1000);
  CHECK(decoder.records_of_kind(CUPTI_ACTIVITY_KIND_DRIVER) == 1000);
  CHECK(decoder.records_of_kind(1000) == 0);
}

TEST_CASE("BufferPool recycles aligned buffers and refuses past its cap") {
  BufferPool pool(1000, 2);
  CHECK(pool.buffer_bytes() % BufferPool::kAlignment == 0);
  CHECK(pool.buffer_bytes() >= 1000);
  std::uint8_t* a = pool.acquire();
  std::uint8_t* b = pool.acquire();
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(reinterpret_cast<std::uintptr_t>(a) % 8 == 0);  // CUPTI's requirement
  CHECK(pool.acquire() == nullptr);
  CHECK(pool.refused() == 1);
  CHECK(pool.in_use() == 2);
  pool.release(a);
  CHECK(pool.in_use() == 1);
  CHECK(pool.acquire() == a);  // recycled, not reallocated
  CHECK(pool.allocated() == 2);
  pool.release(a);
  pool.release(b);
  CHECK(pool.in_use() == 0);
}

TEST_CASE("libcupti candidates: configured path first, then sonames, then next to libcudart") {
  const auto paths =
      CuptiLibrary::candidate_paths("/opt/cupti/libcupti.so.13.0.1", {"/venv/nvidia/cu13/lib"});
  REQUIRE(paths.size() >= 6);
  CHECK(paths[0] == "/opt/cupti/libcupti.so.13.0.1");
  CHECK(paths[1] == "libcupti.so.13");
  CHECK(paths[2] == "libcupti.so");
  CHECK(paths[3] == "/venv/nvidia/cu13/lib/libcupti.so.13");
  const std::set<std::string> all(paths.begin(), paths.end());
  CHECK(all.size() == paths.size());  // no duplicates
  CHECK(all.count("/venv/nvidia/cu13/lib/../../cuda_cupti/lib/libcupti.so.13") == 1);
  CHECK(all.count("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13") == 1);
  CHECK(all.count("/usr/local/cuda/lib64/libcupti.so.13") == 1);

  const auto defaults = CuptiLibrary::candidate_paths("", {});
  CHECK(defaults.front() == "libcupti.so.13");
}

TEST_CASE("CuptiLibrary describes results even before it is loaded") {
  const CuptiLibrary library;
  CHECK_FALSE(library.loaded());
  CHECK(library.describe(CUPTI_ERROR_UNKNOWN) == "CUPTI error 999");
}

// ---- CuptiTracer against a fake CUPTI ---------------------------------------------------------
// The tracer's glue (subscription, launch callbacks, activity buffers) driven through a fake
// libcupti: CuptiLibrary opens libc (any loadable object will do) and the dlsym we pass in answers
// the CUPTI names with the functions below. No GPU, no real CUPTI.

namespace fake {

struct State {
  std::mutex mutex;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  bool subscribed = false;
  bool refuse_subscription = false;
  std::set<std::pair<int, CUpti_CallbackId>> enabled_callbacks;  // (domain, cbid)
  std::set<int> enabled_kinds;
  std::set<int> refused_kinds;  // cuptiActivityEnable fails for these
  std::vector<CUpti_ActivityUnifiedMemoryCounterConfig> um_configs;
  CUptiResult um_config_result = CUPTI_SUCCESS;
  std::size_t um_configs_refused_above = SIZE_MAX;  // more configs than this: CUPTI_ERROR_NOT_SUPPORTED
  uint32_t flush_period = 0;
  // Attributes set before cuptiActivityRegisterCallbacks (CUPTI reads some only then), and after.
  std::map<int, std::uint8_t> attributes_before_register, attributes_after_register;
  CUpti_BuffersCallbackRequestFunc request = nullptr;
  CUpti_BuffersCallbackCompleteFunc complete = nullptr;
  std::vector<std::vector<unsigned char>> pending;  // records for the next flush
  std::vector<std::size_t> offsets;                 // of the records in the buffer being drained
  std::size_t dropped = 0;
  int flushes = 0;
  int forced_flushes = 0;             // with CUPTI_ACTIVITY_FLAG_FLUSH_FORCED
  std::atomic<uint64_t> clock{1000};  // launches from several threads read it
};
State* state = nullptr;

CUptiResult CUPTIAPI subscribe_v2(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback, void* userdata,
                                  CUpti_SubscriberParams* params) {
  if (state->refuse_subscription) {
    if (params != nullptr && params->oldSubscriberName != nullptr) {
      std::snprintf(params->oldSubscriberName, params->oldSubscriberSize, "CUPTI for kineto");
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  state->callback = callback;
  state->userdata = userdata;
  state->subscribed = true;
  *handle = reinterpret_cast<CUpti_SubscriberHandle>(state);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI subscribe(CUpti_SubscriberHandle* handle, CUpti_CallbackFunc callback, void* userdata) {
  return subscribe_v2(handle, callback, userdata, nullptr);
}
CUptiResult CUPTIAPI unsubscribe(CUpti_SubscriberHandle) {
  state->subscribed = false;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI enable_callback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                     CUpti_CallbackId cbid) {
  if (enable != 0) {
    state->enabled_callbacks.insert({domain, cbid});
  } else {
    state->enabled_callbacks.erase({domain, cbid});
  }
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI activity_enable(CUpti_ActivityKind kind) {
  if (state->refused_kinds.count(kind) != 0) return CUPTI_ERROR_NOT_SUPPORTED;
  state->enabled_kinds.insert(kind);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI activity_disable(CUpti_ActivityKind kind) {
  state->enabled_kinds.erase(kind);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI register_callbacks(CUpti_BuffersCallbackRequestFunc request,
                                        CUpti_BuffersCallbackCompleteFunc complete) {
  state->request = request;
  state->complete = complete;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI set_attribute(CUpti_ActivityAttribute attribute, size_t* size, void* value) {
  if (size == nullptr || value == nullptr || *size != sizeof(std::uint8_t))
    return CUPTI_ERROR_INVALID_PARAMETER;
  auto& attributes =
      state->request == nullptr ? state->attributes_before_register : state->attributes_after_register;
  attributes[attribute] = *static_cast<std::uint8_t*>(value);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI configure_um(CUpti_ActivityUnifiedMemoryCounterConfig* configs, uint32_t count) {
  if (count > state->um_configs_refused_above) return CUPTI_ERROR_NOT_SUPPORTED;
  state->um_configs.assign(configs, configs + count);
  return state->um_config_result;
}
CUptiResult CUPTIAPI flush_all(uint32_t flags) {
  std::lock_guard lock(state->mutex);
  ++state->flushes;
  if ((flags & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) != 0) ++state->forced_flushes;
  if (state->pending.empty()) return CUPTI_SUCCESS;
  uint8_t* buffer = nullptr;
  size_t size = 0;
  size_t max_records = 0;
  state->request(&buffer, &size, &max_records);
  if (buffer == nullptr) return CUPTI_SUCCESS;
  size_t used = 0;
  state->offsets.clear();
  std::size_t taken = 0;  // what fits in this buffer; the rest waits for the next flush
  for (const auto& record : state->pending) {
    if (used + record.size() > size) break;
    state->offsets.push_back(used);
    std::memcpy(buffer + used, record.data(), record.size());
    used += (record.size() + 7) / 8 * 8;
    ++taken;
  }
  state->pending.erase(state->pending.begin(), state->pending.begin() + static_cast<std::ptrdiff_t>(taken));
  state->complete(nullptr, 0, buffer, size, used);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI flush_period(uint32_t ms) {
  state->flush_period = ms;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI get_next_record(uint8_t* buffer, size_t, CUpti_Activity** record) {
  std::size_t next = 0;
  if (*record != nullptr) {
    const auto at = static_cast<std::size_t>(reinterpret_cast<uint8_t*>(*record) - buffer);
    const auto it = std::find(state->offsets.begin(), state->offsets.end(), at);
    next = static_cast<std::size_t>(it - state->offsets.begin()) + 1;
  }
  if (next >= state->offsets.size()) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(buffer + state->offsets[next]);
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI dropped_records(CUcontext, uint32_t, size_t* dropped) {
  *dropped = state->dropped;
  state->dropped = 0;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI get_timestamp(uint64_t* timestamp) {
  *timestamp = ++state->clock;
  return CUPTI_SUCCESS;
}
CUptiResult CUPTIAPI result_string(CUptiResult, const char** text) {
  *text = "FAKE_ERROR";
  return CUPTI_SUCCESS;
}

void* dlsym(void*, const char* name) {
  static const std::map<std::string, void*> table = {
      {"cuptiSubscribe", reinterpret_cast<void*>(&subscribe)},
      {"cuptiSubscribe_v2", reinterpret_cast<void*>(&subscribe_v2)},
      {"cuptiUnsubscribe", reinterpret_cast<void*>(&unsubscribe)},
      {"cuptiEnableCallback", reinterpret_cast<void*>(&enable_callback)},
      {"cuptiActivityEnable", reinterpret_cast<void*>(&activity_enable)},
      {"cuptiActivityDisable", reinterpret_cast<void*>(&activity_disable)},
      {"cuptiActivityRegisterCallbacks", reinterpret_cast<void*>(&register_callbacks)},
      {"cuptiActivityConfigureUnifiedMemoryCounter", reinterpret_cast<void*>(&configure_um)},
      {"cuptiActivitySetAttribute", reinterpret_cast<void*>(&set_attribute)},
      {"cuptiActivityFlushAll", reinterpret_cast<void*>(&flush_all)},
      {"cuptiActivityFlushPeriod", reinterpret_cast<void*>(&flush_period)},
      {"cuptiActivityGetNextRecord", reinterpret_cast<void*>(&get_next_record)},
      {"cuptiActivityGetNumDroppedRecords", reinterpret_cast<void*>(&dropped_records)},
      {"cuptiGetTimestamp", reinterpret_cast<void*>(&get_timestamp)},
      {"cuptiGetResultString", reinterpret_cast<void*>(&result_string)},
  };
  const auto it = table.find(name);
  return it == table.end() ? nullptr : it->second;
}

// The driver: function 0xF000 takes (float*, int, float*); CUkernel 0xE000 takes (Pair-like 16
// bytes); anything else is not a function the driver knows.
constexpr std::uint64_t kFunction = 0xF000;
constexpr std::uint64_t kKernel = 0xE000;
std::atomic<int> driver_calls{0};  // every call into the fake driver
CUresult CUDAAPI func_get_param_info(CUfunction f, size_t index, size_t* offset, size_t* size) {
  ++driver_calls;
  if (reinterpret_cast<std::uintptr_t>(f) != kFunction) return CUDA_ERROR_INVALID_HANDLE;
  static const std::pair<size_t, size_t> layout[] = {{0, 8}, {8, 4}, {16, 8}};
  if (index >= 3) return CUDA_ERROR_INVALID_VALUE;
  *offset = layout[index].first;
  *size = layout[index].second;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI kernel_get_param_info(CUkernel k, size_t index, size_t* offset, size_t* size) {
  ++driver_calls;
  if (reinterpret_cast<std::uintptr_t>(k) != kKernel) return CUDA_ERROR_INVALID_HANDLE;
  if (index >= 1) return CUDA_ERROR_INVALID_VALUE;
  *offset = 0;
  *size = 16;
  return CUDA_SUCCESS;
}
CUresult CUDAAPI kernel_get_name(const char** name, CUkernel k) {
  ++driver_calls;
  if (reinterpret_cast<std::uintptr_t>(k) != kKernel) return CUDA_ERROR_INVALID_HANDLE;
  *name = "kernel_from_library";
  return CUDA_SUCCESS;
}

class Managed final : public ManagedLookup {
 public:
  bool contains(std::uint64_t address) const noexcept override {
    return address - 0x7f0000000000 < (1u << 30);
  }
};

struct RecordingSink final : EventSink {
  std::mutex mutex;
  std::vector<core::KernelLaunch> launches;
  std::vector<core::KernelExecution> executions;
  std::vector<core::PageFault> faults;
  std::vector<core::Migration> migrations;
  std::vector<core::DriverAction> driver_actions;
  std::vector<std::pair<std::uint64_t, std::string>> names;
  std::vector<std::uint64_t> contexts_destroyed;
  bool throw_on_launch = false;

  void on_launch(const core::KernelLaunch& launch, const core::LaunchPointers*) override {
    if (throw_on_launch) throw std::runtime_error("sink failure");
    launches.push_back(launch);
  }
  void on_execution(const core::KernelExecution& e) override {
    std::lock_guard lock(mutex);
    executions.push_back(e);
  }
  void on_fault(const core::PageFault& f) override {
    std::lock_guard lock(mutex);
    faults.push_back(f);
  }
  void on_migration(const core::Migration& m) override {
    std::lock_guard lock(mutex);
    migrations.push_back(m);
  }
  void on_driver_action(const core::DriverAction& a) override {
    std::lock_guard lock(mutex);
    driver_actions.push_back(a);
  }
  void on_function_name(std::uint64_t function, const char* name) override {
    names.emplace_back(function, name);
  }
  void on_context_destroying(std::uint64_t context) override { contexts_destroyed.push_back(context); }
  std::size_t activity_count() {
    std::lock_guard lock(mutex);
    return executions.size() + faults.size() + migrations.size();
  }
};

DriverApi driver() {
  DriverApi api;
  api.func_get_param_info = &func_get_param_info;
  api.kernel_get_param_info = &kernel_get_param_info;
  api.kernel_get_name = &kernel_get_name;
  return api;
}

// The owners (module, library) the fake getters hand the two functions out of.
constexpr std::uint64_t kModule = 0xA000;
constexpr std::uint64_t kLibrary = 0xB000;

TracerOptions options(const Managed& managed, FunctionLayouts* layouts = nullptr) {
  TracerOptions o;
  o.dlsym = &fake::dlsym;
  o.cupti_path = "libc.so.6";
  o.driver = driver();
  o.managed = &managed;
  o.layouts = layouts;
  o.poll_period_ms = 0;
  o.stop_at_exit = false;
  o.buffer_bytes = 4096;
  o.max_buffers = 4;
  return o;
}

void call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData& data) {
  state->callback(state->userdata, domain, cbid, &data);
}

template <typename Params>
CUpti_CallbackData enter(const Params& params, const char* symbol, uint32_t correlation) {
  CUpti_CallbackData data{};
  data.callbackSite = CUPTI_API_ENTER;
  data.functionName = "cuLaunchSomething";
  data.functionParams = &params;
  data.symbolName = symbol;
  data.correlationId = correlation;
  return data;
}

template <typename Record>
void queue(const Record& record) {
  std::lock_guard lock(state->mutex);
  std::vector<unsigned char> bytes(sizeof(Record));
  std::memcpy(bytes.data(), &record, sizeof(Record));
  state->pending.push_back(std::move(bytes));
}

}  // namespace fake

TEST_CASE("CuptiTracer: subscription, launch callbacks and activity buffers against a fake CUPTI") {
  fake::State state;
  fake::state = &state;
  fake::Managed managed;
  fake::RecordingSink sink;
  FunctionLayouts layouts(fake::driver());
  // What the getter interposers do when the program gets its functions.
  layouts.learn(fake::kFunction, FunctionLayouts::Handle::function, fake::kModule);
  layouts.learn(fake::kKernel, FunctionLayouts::Handle::kernel, fake::kLibrary);
  layouts.learn(fake::kFunction, FunctionLayouts::Handle::function, fake::kModule);  // known: not asked again
  const int learned_with = fake::driver_calls.load();
  {
    CuptiTracer tracer;
    const StartStatus status = tracer.start(fake::options(managed, &layouts), sink);
    INFO(status.detail);
    CHECK(status.outcome == StartStatus::Outcome::started);
    CHECK(status.launch_callbacks);
    CHECK(status.kernel_records);
    CHECK(status.um_counters);
    CHECK(tracer.running());
    CHECK(state.subscribed);
    // One buffer per thread, asked for before the buffer callbacks are registered.
    CHECK(state.attributes_before_register.at(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER) == 1);
    CHECK(state.attributes_after_register.empty());
    CHECK(state.enabled_callbacks.count(
              {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel}) == 1);
    CHECK(state.enabled_callbacks.count(
              {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz}) == 1);
    CHECK(state.enabled_callbacks.count(
              {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch}) == 1);
    CHECK(state.enabled_callbacks.count(
              {CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING}) == 1);
    CHECK(state.enabled_callbacks.size() == 9);  // the launch APIs, and contexts going away
    CHECK(state.enabled_kinds.count(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) == 1);
    CHECK(state.enabled_kinds.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == 1);
    CHECK(state.enabled_kinds.count(CUPTI_ACTIVITY_KIND_MEMCPY) == 1);
    CHECK(state.enabled_kinds.count(CUPTI_ACTIVITY_KIND_MEMSET) == 1);
    CHECK(state.enabled_kinds.size() == 4);
    REQUIRE(state.um_configs.size() == 6);  // faults, both directions, and the thrashing counters
    for (const auto& config : state.um_configs) {
      CHECK(config.enable == 1);
      CHECK(config.deviceId == 0);
    }
    CHECK(state.flush_period == 5);

    // cuLaunchKernel(f, grid, block, ..., kernelParams = {&a, &n, &b}): two managed pointers.
    std::uint64_t a = 0x7f0000001000;
    std::int32_t n = 4;
    std::uint64_t b = 0x7f0000200000;
    void* kernel_params[] = {&a, &n, &b};
    cuLaunchKernel_params launch{};
    launch.f = reinterpret_cast<CUfunction>(fake::kFunction);
    launch.gridDimX = 80;
    launch.gridDimY = launch.gridDimZ = 1;
    launch.blockDimX = 256;
    launch.blockDimY = launch.blockDimZ = 1;
    launch.hStream = reinterpret_cast<CUstream>(std::uintptr_t{0x5000});
    launch.kernelParams = kernel_params;
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
               fake::enter(launch, "saxpy", 11));
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
               fake::enter(launch, "saxpy", 12));
    auto exit_site = fake::enter(launch, "saxpy", 12);
    exit_site.callbackSite = CUPTI_API_EXIT;
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, exit_site);  // ignored
    REQUIRE(sink.launches.size() == 2);
    const core::KernelLaunch& first = sink.launches[0];
    CHECK(first.correlation_id == 11);
    CHECK(first.function == fake::kFunction);
    CHECK(first.stream == 0x5000);
    CHECK(first.grid == std::array<std::uint32_t, 3>{80, 1, 1});
    CHECK(first.block == std::array<std::uint32_t, 3>{256, 1, 1});
    CHECK(first.host_time > 1000);
    REQUIRE(first.pointer_count == 2);
    CHECK(first.pointers[0] == a);
    CHECK(first.pointers[1] == b);
    CHECK(sink.launches[1].execution_key == first.execution_key);
    REQUIRE(sink.names.size() == 1);  // named once
    CHECK(sink.names[0] == std::pair<std::uint64_t, std::string>{fake::kFunction, "saxpy"});

    // cuLaunchKernelEx_ptsz with a CUkernel handle: the layout learned through
    // cuKernelGetParamInfo; CUPTI gives no name, and the callback asks the driver for none.
    struct {
      std::uint64_t pointer;
      std::uint64_t count;
    } pair{0x7f0000300000, 10};
    void* ex_params[] = {&pair};
    CUlaunchConfig config{};
    config.gridDimX = 2;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 32;
    config.blockDimY = config.blockDimZ = 1;
    cuLaunchKernelEx_ptsz_params ex{};
    ex.config = &config;
    ex.f = reinterpret_cast<CUfunction>(fake::kKernel);
    ex.kernelParams = ex_params;
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
               fake::enter(ex, nullptr, 13));
    REQUIRE(sink.launches.size() == 3);
    CHECK(sink.launches[2].grid == std::array<std::uint32_t, 3>{2, 1, 1});
    CHECK(sink.launches[2].pointer_count == 1);
    CHECK(sink.launches[2].pointers[0] == 0x7f0000300000);
    CHECK(sink.names.back() == std::pair<std::uint64_t, std::string>{fake::kKernel, "<unknown>"});

    // A packed `extra` buffer on an unknown function: scanned without a layout.
    std::uint64_t packed[3] = {0x7f0000400000, 7, 0x7f0000000040};
    std::size_t packed_size = sizeof(packed);
    void* extra[] = {reinterpret_cast<void*>(std::uintptr_t{CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT}), packed,
                     reinterpret_cast<void*>(std::uintptr_t{CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT}),
                     &packed_size, nullptr};
    cuLaunchKernel_ptsz_params nvjet{};
    nvjet.f = reinterpret_cast<CUfunction>(std::uintptr_t{0xD000});
    nvjet.extra = extra;
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
               fake::enter(nvjet, "nvjet_hsh_128x256", 14));
    REQUIRE(sink.launches.size() == 4);
    CHECK(sink.launches[3].pointer_count == 2);

    // A graph launch: the exec handle, no pointers, a fixed name.
    cuGraphLaunch_params graph{};
    graph.hGraph = reinterpret_cast<CUgraphExec>(std::uintptr_t{0xC000});
    graph.hStream = reinterpret_cast<CUstream>(std::uintptr_t{0x5000});
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
               fake::enter(graph, nullptr, 15));
    REQUIRE(sink.launches.size() == 5);
    CHECK(sink.launches[4].function == 0xC000);
    CHECK(sink.launches[4].pointer_count == 0);
    CHECK(sink.launches[4].grid == std::array<std::uint32_t, 3>{0, 0, 0});
    CHECK(sink.launches[4].unnamed_memory);  // its kernels' arguments are not seen
    CHECK_FALSE(sink.launches[0].unnamed_memory);
    CHECK(sink.names.back() == std::pair<std::uint64_t, std::string>{0xC000, "<cuda-graph>"});

    // Launch callbacks never call the driver: every layout was learned from the getters.
    CHECK(fake::driver_calls.load() == learned_with);

    // Its module unloaded, the handle's layout is unknown (it may name another function later):
    // the launch is scanned as unreadable and named again; the kernel of the library stays known.
    const std::size_t names_before = sink.names.size();
    layouts.forget_owner(fake::kModule);
    CHECK(layouts.find(fake::kFunction) == nullptr);
    CHECK(layouts.find(fake::kKernel) != nullptr);
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
               fake::enter(launch, "saxpy", 16));
    CHECK(sink.names.size() == names_before + 1);
    CHECK(sink.launches.back().unnamed_memory);
    CHECK(sink.launches.back().pointer_count == 0);
    layouts.learn(fake::kFunction, FunctionLayouts::Handle::function, fake::kModule);  // handed out again

    // A context about to be destroyed reaches the sink, whatever destroys it.
    CUpti_ResourceData destroyed{};
    destroyed.context = reinterpret_cast<CUcontext>(std::uintptr_t{0xCC00});
    state.callback(state.userdata, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING,
                   &destroyed);
    CHECK(sink.contexts_destroyed == std::vector<std::uint64_t>{0xCC00});

    // A sink that throws never takes CUPTI (and the program) down.
    sink.throw_on_launch = true;
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
               fake::enter(launch, "saxpy", 17));
    sink.throw_on_launch = false;

    // Activity: records go through a buffer to the sink; dropped records are counted.
    CUpti_ActivityKernel10 kernel;
    std::memset(&kernel, 0, sizeof(kernel));
    kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    kernel.correlationId = 11;
    kernel.start = 2000;
    kernel.end = 3000;
    CUpti_ActivityUnifiedMemoryCounter3 fault;
    std::memset(&fault, 0, sizeof(fault));
    fault.kind = CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER;
    fault.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_GPU_PAGE_FAULT;
    fault.address = 0x7f0000001000;
    fault.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_ACCESS_TYPE_READ;
    CUpti_ActivityUnifiedMemoryCounter3 migration = fault;
    migration.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_BYTES_TRANSFER_HTOD;
    migration.value = 2 << 20;
    migration.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_MIGRATION_CAUSE_COHERENCE;
    migration.start = 2100;
    migration.end = 2300;
    CUpti_ActivityUnifiedMemoryCounter3 remote_map = migration;
    remote_map.counterKind = CUPTI_ACTIVITY_UNIFIED_MEMORY_COUNTER_KIND_REMOTE_MAP;
    remote_map.flags = CUPTI_ACTIVITY_UNIFIED_MEMORY_REMOTE_MAP_CAUSE_THRASHING;
    const auto copy = memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 1 << 20);
    const auto set = memset_record(4096);
    CUpti_ActivityKernel10 driver_record = kernel;
    driver_record.kind = CUPTI_ACTIVITY_KIND_DRIVER;
    fake::queue(kernel);
    fake::queue(fault);
    fake::queue(migration);
    fake::queue(remote_map);
    fake::queue(copy);
    fake::queue(set);
    fake::queue(driver_record);
    state.dropped = 3;
    tracer.flush();
    REQUIRE(sink.executions.size() == 3);
    CHECK(sink.executions[0].correlation_id == 11);
    CHECK(sink.executions[0].operation == core::GpuOperation::kernel);
    CHECK(sink.executions[1].operation == core::GpuOperation::memcpy);
    CHECK(sink.executions[1].copy_kind == std::uint8_t{CUPTI_ACTIVITY_MEMCPY_KIND_HTOD});
    CHECK(sink.executions[1].bytes == (std::uint64_t{1} << 20));
    CHECK(sink.executions[2].operation == core::GpuOperation::memset);
    CHECK(sink.executions[2].bytes == 4096u);
    REQUIRE(sink.faults.size() == 1);
    CHECK(sink.faults[0].access == core::FaultAccess::read);
    REQUIRE(sink.migrations.size() == 1);
    CHECK(sink.migrations[0].cause == core::MigrationCause::coherence);
    REQUIRE(sink.driver_actions.size() == 1);
    CHECK(sink.driver_actions[0].kind == core::DriverAction::Kind::remote_map);
    CHECK(sink.driver_actions[0].cause == core::DriverAction::Cause::thrashing);
    CHECK(sink.driver_actions[0].bytes == (2u << 20));

    const TracerStats stats = tracer.stats();
    CHECK(stats.launches == 6);
    CHECK(stats.graph_launches == 1);
    CHECK(stats.launches_by_api[0] == 4);  // cuLaunchKernel (11, 12, 16, 17)
    CHECK(stats.launches_by_api[1] == 1);  // cuLaunchKernel_ptsz
    CHECK(stats.launches_by_api[3] == 1);  // cuLaunchKernelEx_ptsz
    CHECK(stats.launches_by_api[6] == 1);  // cuGraphLaunch
    CHECK(std::string(launch_api_name(3)) == "cuLaunchKernelEx_ptsz");
    CHECK(stats.launches_with_managed_pointers == 5);  // counted before the sink threw, too
    CHECK(stats.launches_packed_buffer == 1);
    CHECK(stats.launches_without_layout == 1);  // launch 16, after the unload
    CHECK(stats.layouts.from_function == 2);    // before and after the unload
    CHECK(stats.layouts.from_kernel == 1);
    CHECK(stats.layouts.unloads == 1);
    CHECK(stats.layouts.already_known == 1);
    CHECK(stats.callback_exceptions == 1);
    CHECK(stats.records[RecordClass::kernel] == 1);
    CHECK(stats.records[RecordClass::memcpy] == 1);
    CHECK(stats.records[RecordClass::memset] == 1);
    CHECK(stats.records[RecordClass::page_fault] == 1);
    CHECK(stats.records[RecordClass::migration] == 1);
    CHECK(stats.records[RecordClass::driver_action] == 1);
    CHECK(stats.records[RecordClass::unknown_kind] == 1);
    CHECK(stats.dropped_records == 3);
    CHECK(stats.buffers_requested == 1);
    CHECK(stats.buffers_completed == 1);
    CHECK(stats.buffers_allocated == 1);

    tracer.stop();
    CHECK_FALSE(tracer.running());
    CHECK_FALSE(state.subscribed);
    CHECK(state.enabled_callbacks.empty());
    CHECK(state.enabled_kinds.empty());
    // After stop, launches are no longer seen.
    fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
               fake::enter(launch, "saxpy", 18));
    CHECK(sink.launches.size() == 6);
  }
  fake::state = nullptr;
}

TEST_CASE("CuptiTracer: the poll thread delivers records without an explicit flush") {
  fake::State state;
  fake::state = &state;
  fake::Managed managed;
  fake::RecordingSink sink;
  CuptiTracer tracer;
  TracerOptions options = fake::options(managed);
  options.level = TracingLevel::activity;
  options.poll_period_ms = 1;
  const StartStatus status = tracer.start(options, sink);
  CHECK(status.outcome == StartStatus::Outcome::started);
  CHECK_FALSE(status.launch_callbacks);
  CHECK(state.enabled_callbacks.empty());
  CUpti_ActivityKernel10 kernel;
  std::memset(&kernel, 0, sizeof(kernel));
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = 100;
  kernel.end = 200;
  fake::queue(kernel);
  for (int i = 0; i < 2000 && sink.activity_count() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(sink.activity_count() == 1);
  tracer.stop();
  CHECK(tracer.stats().polls >= 1);
  CHECK(state.forced_flushes == 1);  // stop()'s own, never the poll thread's
  fake::state = nullptr;
}

TEST_CASE(
    "CuptiTracer: paused kernel records are filtered in deepum; CUPTI is configured at start and stop only") {
  fake::State state;
  fake::state = &state;
  fake::Managed managed;
  fake::RecordingSink sink;
  CuptiTracer tracer;
  REQUIRE(tracer.start(fake::options(managed), sink).outcome == StartStatus::Outcome::started);
  const std::set<int> kinds = state.enabled_kinds;
  CUpti_ActivityKernel10 kernel;
  std::memset(&kernel, 0, sizeof(kernel));
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.start = 100;
  kernel.end = 200;

  tracer.set_kernel_records_paused(true);
  CHECK(tracer.kernel_records_paused());
  CHECK(state.enabled_kinds == kinds);  // nothing disabled while the program's launches run
  fake::queue(kernel);
  fake::queue(memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096));
  tracer.flush();
  REQUIRE(sink.executions.size() == 1);  // the copy: its faults still need attributing
  CHECK(sink.executions[0].operation == core::GpuOperation::memcpy);
  CHECK(tracer.stats().kernel_records_filtered == 1);

  tracer.set_kernel_records_paused(false);
  CHECK(state.enabled_kinds == kinds);
  fake::queue(kernel);
  tracer.flush();
  CHECK(sink.executions.size() == 2);

  // While a stream capture runs, a flush might wait for the GPU: the poll leaves it for later.
  const int flushes = state.flushes;
  CHECK(core::capture_gate().begin_capture());
  tracer.poll();
  CHECK(state.flushes == flushes);
  CHECK(tracer.stats().polls_skipped_capturing == 1);
  core::capture_gate().end_capture();
  tracer.poll();
  CHECK(state.flushes == flushes + 1);
  tracer.stop();
  fake::state = nullptr;
}

namespace fake {

// Counts what arrives, from any thread.
struct CountingSink final : EventSink {
  std::atomic<std::uint64_t> launches{0}, with_pointers{0}, executions{0}, names{0};
  void on_launch(const core::KernelLaunch& launch, const core::LaunchPointers*) override {
    ++launches;
    if (launch.pointer_count != 0) ++with_pointers;
  }
  void on_execution(const core::KernelExecution&) override { ++executions; }
  void on_fault(const core::PageFault&) override {}
  void on_migration(const core::Migration&) override {}
  void on_driver_action(const core::DriverAction&) override {}
  void on_function_name(std::uint64_t, const char*) override { ++names; }
};

}  // namespace fake

TEST_CASE(
    "CuptiTracer: launches from many threads while records flush, pause and resume, and modules unload") {
  // The tracer's threads against the program's, as ThreadSanitizer sees them (this test runs in
  // the TSan build): eight threads launch; one learns and forgets functions as getters and unloads
  // would; one queues records and pauses and resumes kernel records; the poll thread flushes every
  // millisecond. Nothing may be lost, nothing may race, and the driver is never called from a launch.
  fake::State state;
  fake::state = &state;
  fake::Managed managed;
  fake::CountingSink sink;
  FunctionLayouts layouts(fake::driver());
  layouts.learn(fake::kFunction, FunctionLayouts::Handle::function, fake::kModule);
  CuptiTracer tracer;
  TracerOptions options = fake::options(managed, &layouts);
  options.poll_period_ms = 1;
  REQUIRE(tracer.start(options, sink).outcome == StartStatus::Outcome::started);

  constexpr int kThreads = 8, kLaunches = 2000;
  std::atomic<bool> done{false};
  std::thread churn([&] {  // a module unloaded and its function handed out again, over and over
    while (!done.load()) {
      layouts.forget_owner(fake::kModule);
      layouts.learn(fake::kFunction, FunctionLayouts::Handle::function, fake::kModule);
    }
  });
  std::thread records([&] {
    CUpti_ActivityKernel10 kernel;
    std::memset(&kernel, 0, sizeof(kernel));
    kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    for (int i = 0; !done.load(); ++i) {
      kernel.start = static_cast<std::uint64_t>(i) * 10;
      kernel.end = kernel.start + 5;
      fake::queue(kernel);
      tracer.set_kernel_records_paused(i % 3 == 0);
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> launchers;
  for (int t = 0; t < kThreads; ++t) {
    launchers.emplace_back([&, t] {
      std::uint64_t pointer = 0x7f0000001000 + static_cast<std::uint64_t>(t) * 0x100000;
      std::int32_t n = t;
      void* params[] = {&pointer, &n, &pointer};
      cuLaunchKernel_params launch{};
      launch.f = reinterpret_cast<CUfunction>(fake::kFunction);
      launch.gridDimX = launch.gridDimY = launch.gridDimZ = 1;
      launch.blockDimX = launch.blockDimY = launch.blockDimZ = 1;
      launch.hStream = reinterpret_cast<CUstream>(std::uintptr_t{0x5000} + static_cast<std::uintptr_t>(t));
      launch.kernelParams = params;
      for (int i = 0; i < kLaunches; ++i) {
        fake::call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
                   fake::enter(launch, "saxpy", static_cast<uint32_t>(i)));
      }
    });
  }
  for (std::thread& launcher : launchers) launcher.join();
  // The launches can end before the poll thread's first round on a loaded machine: the records
  // and the churn go on until it has flushed at least once (bounded: five seconds).
  for (int i = 0; i < 5000 && tracer.stats().polls == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  done.store(true);
  churn.join();
  records.join();
  tracer.stop();
  CHECK(sink.launches.load() == std::uint64_t{kThreads} * kLaunches);
  CHECK(sink.with_pointers.load() <= sink.launches.load());  // unknown while unloaded: no pointers
  CHECK(sink.names.load() >= 1);
  CHECK(tracer.stats().launches == std::uint64_t{kThreads} * kLaunches);
  CHECK(tracer.stats().polls >= 1);
  fake::state = nullptr;
}

TEST_CASE("CuptiTracer: another CUPTI client, missing UM support and level none are reported, not fatal") {
  fake::Managed managed;
  fake::RecordingSink sink;
  {
    fake::State state;
    fake::state = &state;
    state.refuse_subscription = true;
    CuptiTracer tracer;
    const StartStatus status = tracer.start(fake::options(managed), sink);
    CHECK(status.outcome == StartStatus::Outcome::other_subscriber);
    CHECK_FALSE(status.running());
    CHECK(status.detail.find("CUPTI for kineto") != std::string::npos);
    const bool took_buffers = state.request != nullptr;
    CHECK_FALSE(took_buffers);  // never took the activity buffers from the other client
    CHECK_FALSE(tracer.running());
  }
  {
    fake::State state;
    fake::state = &state;
    state.um_config_result = CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED;
    CuptiTracer tracer;
    const StartStatus status = tracer.start(fake::options(managed), sink);
    CHECK(status.outcome == StartStatus::Outcome::partial);
    CHECK(status.launch_callbacks);
    CHECK(status.kernel_records);
    CHECK_FALSE(status.um_counters);
    CHECK(status.detail.find("FAKE_ERROR") != std::string::npos);
    CHECK(state.enabled_kinds.count(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) == 0);
    tracer.stop();
  }
  {
    // A CUPTI without the thrashing counters: faults and migrations still come.
    fake::State state;
    fake::state = &state;
    state.um_configs_refused_above = 3;
    CuptiTracer tracer;
    const StartStatus status = tracer.start(fake::options(managed), sink);
    CHECK(status.outcome == StartStatus::Outcome::partial);
    CHECK(status.um_counters);
    CHECK(state.um_configs.size() == 3);
    CHECK(status.detail.find("thrashing counters are unavailable") != std::string::npos);
    CHECK(state.enabled_kinds.count(CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER) == 1);
    tracer.stop();
  }
  {
    // Thrashing counters not asked for: the three that deepum needs, and nothing to report.
    fake::State state;
    fake::state = &state;
    TracerOptions options = fake::options(managed);
    options.thrashing_counters = false;
    CuptiTracer tracer;
    const StartStatus status = tracer.start(options, sink);
    CHECK(status.outcome == StartStatus::Outcome::started);
    CHECK(state.um_configs.size() == 3);
    tracer.stop();
  }
  {
    // No copy or memset records: kernels and faults still come, the outcome says partial.
    fake::State state;
    fake::state = &state;
    state.refused_kinds = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
    CuptiTracer tracer;
    const StartStatus status = tracer.start(fake::options(managed), sink);
    INFO(status.detail);
    CHECK(status.outcome == StartStatus::Outcome::partial);
    CHECK(status.kernel_records);
    CHECK(status.um_counters);
    CHECK(status.detail.find("Faults raised by copies are not attributed: MEMCPY activity unavailable") !=
          std::string::npos);
    CHECK(status.detail.find("Faults raised by memsets are not attributed: MEMSET activity unavailable") !=
          std::string::npos);
    CHECK(state.enabled_kinds ==
          std::set<int>{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER});
    tracer.stop();
    CHECK(state.enabled_kinds.empty());
  }
  {
    // Without kernel records, no copies either.
    fake::State state;
    fake::state = &state;
    CuptiTracer tracer;
    TracerOptions options = fake::options(managed);
    options.kernel_records = false;
    const StartStatus status = tracer.start(options, sink);
    CHECK(status.outcome == StartStatus::Outcome::started);
    CHECK(state.enabled_kinds == std::set<int>{CUPTI_ACTIVITY_KIND_UNIFIED_MEMORY_COUNTER});
    tracer.stop();
  }
  {
    fake::State state;
    fake::state = &state;
    CuptiTracer tracer;
    TracerOptions options = fake::options(managed);
    options.level = TracingLevel::none;
    const StartStatus status = tracer.start(options, sink);
    CHECK(status.outcome == StartStatus::Outcome::disabled);
    CHECK_FALSE(state.subscribed);
  }
  fake::state = nullptr;
}
