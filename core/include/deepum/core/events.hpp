// The plain events deepum's decision logic eats: what the program launched, what the GPU ran, the
// page faults and migrations CUPTI reported, allocations and frees, and the hints deepum issued.
// No CUDA headers: the tracer turns vendor records into these, tests fabricate them, and the
// simulator replays them from trace files.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace deepum::core {

// Nanoseconds on CUPTI's clock (cuptiGetTimestamp), the clock of every GPU-side record.
using Timestamp = std::uint64_t;

// DeepUM's granularity: the driver's 2 MB virtual-address block.
inline constexpr std::uint64_t kBlockShift = 21;
inline constexpr std::uint64_t kBlockBytes = std::uint64_t{1} << kBlockShift;
using BlockId = std::uint64_t;  // address >> kBlockShift
constexpr BlockId block_of(std::uint64_t address) { return address >> kBlockShift; }
constexpr std::uint64_t block_base(BlockId block) { return block << kBlockShift; }

// A kernel launch as the host enqueued it (launch callback, API enter).
struct KernelLaunch {
  static constexpr std::size_t kMaxPointers = 24;

  std::uint64_t correlation_id = 0;  // CUPTI's, shared with the kernel's activity record
  std::uint64_t execution_key = 0;   // stable across iterations: function, shape, managed pointers
  std::uint64_t function = 0;        // the CUfunction handle, as an opaque id
  std::uint64_t stream = 0;          // the CUstream handle, as an opaque id
  Timestamp host_time = 0;
  std::array<std::uint32_t, 3> grid{};
  std::array<std::uint32_t, 3> block{};
  std::uint16_t pointer_count = 0;  // managed pointers found among the arguments
  bool pointers_truncated = false;  // more than kMaxPointers were found
  // It may reach managed memory its pointers do not show: a graph launch, or a kernel whose
  // parameter layout is unknown (nothing was scanned). Not written to trace files.
  bool unnamed_memory = false;
  std::array<std::uint64_t, kMaxPointers> pointers{};
  // Bytes each pointer reaches, to the end of the buffer the program's allocator handed out (a
  // PyTorch tensor's block); 0 where unknown. Not written to trace files.
  std::array<std::uint64_t, kMaxPointers> extents{};
  // The CUcontext it was launched in, as an opaque id (0: not known): which device's engine
  // orders its moves. Not written to trace files.
  std::uint64_t context = 0;
  // deepum decided moves or waits for it (enqueued before it, or held its launch call): its GPU
  // wait counts as one behind deepum's moves. Not written to trace files.
  bool behind_moves = false;
};

// Every managed pointer a launch's arguments hold, with the bytes each reaches (as
// KernelLaunch::extents), where there are more than KernelLaunch keeps (a foreach kernel's tensor
// lists). Borrowed: valid during the launch callback only, never queued.
struct LaunchPointers {
  const std::uint64_t* pointers = nullptr;
  const std::uint64_t* extents = nullptr;
  std::size_t count = 0;
  bool complete = false;  // no pointer was lost (the scan kept every one it found)
};

// What the GPU ran: a kernel, or a copy-engine operation (cudaMemcpy*/cudaMemset* and their driver
// twins), which can touch managed memory and so raise page faults too.
enum class GpuOperation : std::uint8_t { kernel, memcpy, memset };

// deepum's own copy kernel (cuda/copy_kernel.hpp), by its function's name: launched within the
// callback of a program's call, its execution records carry that call's correlation id. The
// decoder gives them kOwnKernelCorrelation instead (CUPTI numbers calls from 1), which trace
// files keep, so that no program launch is matched to them.
inline constexpr char kOwnCopyKernelName[] = "deepum_copy_within_gpu";
inline constexpr std::uint64_t kOwnKernelCorrelation = 0;

// An operation as the GPU ran it (CUPTI concurrent-kernel, memcpy or memset activity record). For a
// copy or a memset, correlation_id is the API call's; no KernelLaunch carries it.
struct KernelExecution {
  std::uint64_t correlation_id = 0;
  Timestamp start = 0;
  Timestamp end = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t device = 0;
  GpuOperation operation = GpuOperation::kernel;
  std::uint8_t copy_kind = 0;  // memcpy: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD, ...); 0 unknown
  std::uint64_t bytes = 0;     // memcpy, memset: bytes copied or set; 0 for a kernel

  bool deepums_own() const {
    return operation == GpuOperation::kernel && correlation_id == kOwnKernelCorrelation;
  }
};

// A copy or memset as the host enqueued it (driver API entry), naming its managed operands. Copy
// engines fault managed memory in as kernels do (a cudaMemcpy from managed memory on the host
// brought each 32 MiB buffer to the GPU first: H100), so evictions are ordered before them too.
struct CopyLaunch {
  static constexpr std::size_t kMaxOperands = 2;  // destination, source

  std::uint64_t correlation_id = 0;
  std::uint64_t stream = 0;  // the CUstream handle (0: the legacy stream)
  Timestamp host_time = 0;
  GpuOperation operation = GpuOperation::memcpy;
  std::uint16_t operand_count = 0;  // the operands in managed memory
  std::array<std::uint64_t, kMaxOperands> operands{};
  std::uint64_t bytes = 0;  // each operand spans this many bytes
  // A copy whose operands are not decoded (2-D, 3-D, peer, batched, array copies, 2-D memsets):
  // it may write managed memory no operand shows.
  bool unnamed_memory = false;
  std::uint64_t context = 0;  // as KernelLaunch::context
  // A stream memory operation that waits for a value (cuStreamWaitValue32/64), which work enqueued
  // later, in any stream, may write.
  bool waits_for_value = false;
};

enum class FaultAccess : std::uint8_t { unknown, read, write, atomic, prefetch };

// A GPU page fault group (CUPTI unified-memory counter, GPU_PAGE_FAULT).
struct PageFault {
  Timestamp start = 0;
  Timestamp end = 0;
  std::uint64_t address = 0;
  std::uint64_t fault_count = 1;  // faults the driver grouped into this record
  FaultAccess access = FaultAccess::unknown;
  std::uint32_t device = 0;
};

enum class MigrationDirection : std::uint8_t { host_to_device, device_to_host };
// Why the driver moved the bytes (CUpti_ActivityUnifiedMemoryMigrationCause). One cause is
// deepum's own: an eviction it ordered before a launch has finished, so the whole range is on the
// host as of `end`. Needed because CUPTI loses the driver's records of many of those evictions (a
// streaming test faulted 64 MiB back in with no record of it ever leaving, H100): without it, the
// records in time order would keep the range resident for good. The other, its twin: a prefetch
// deepum ordered before a launch has finished, so the whole range is on the GPU from `start`.
enum class MigrationCause : std::uint8_t {
  unknown,
  user,
  coherence,
  prefetch,
  eviction,
  access_counters,
  deepum_eviction_done,
  deepum_prefetch_done,
};

// Bytes moved by the driver (CUPTI unified-memory counter, BYTES_TRANSFER_HTOD/DTOH).
struct Migration {
  Timestamp start = 0;
  Timestamp end = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  MigrationDirection direction = MigrationDirection::host_to_device;
  MigrationCause cause = MigrationCause::unknown;
};

// The driver's answer to thrashing (CUPTI unified-memory counters THRASHING, THROTTLING,
// REMOTE_MAP): a region it saw bouncing between processors, a processor it stalled, or memory it
// mapped over the link instead of migrating it. Memory mapped remotely is used where it lies, so
// it stops faulting without being resident.
struct DriverAction {
  enum class Kind : std::uint8_t { thrashing, throttling, remote_map };
  // Why memory was mapped remotely (CUpti_ActivityUnifiedMemoryRemoteMapCause); remote_map only.
  enum class Cause : std::uint8_t { unknown, coherence, thrashing, policy, out_of_memory, eviction };
  Kind kind = Kind::thrashing;
  Cause cause = Cause::unknown;
  Timestamp start = 0;
  Timestamp end = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;  // thrashing, remote_map: size of the region
};

// Every managed pointer a kernel launch names, with the bytes each reaches, for trace files (where
// KernelLaunch keeps 24 pointers and no extents). The simulator replays launch-ordered residency
// (core::LaunchOrderedResidency) from these exactly as the library decided it. Only written while
// a trace file is recorded: it allocates per launch.
struct LaunchOperands {
  std::uint64_t correlation_id = 0;  // the launch's (KernelLaunch::correlation_id)
  bool complete = true;              // no pointer was lost (LaunchPointers::complete)
  bool unnamed_memory = false;       // KernelLaunch::unnamed_memory
  std::vector<std::uint64_t> pointers;
  std::vector<std::uint64_t> extents;  // one per pointer; 0 where unknown
};

// The program's caching allocator (PyTorch's) handing a buffer out or taking it back into its
// cache on a stream: what launch-ordered residency decides discards and fresh placements from.
struct BufferEvent {
  enum class Kind : std::uint8_t { handed_out, returned };
  Kind kind = Kind::handed_out;
  Timestamp time = 0;  // host time, the clock of KernelLaunch::host_time
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t stream = 0;  // returned: the stream it was freed on
};

// A managed range coming or going (from the allocation interposers).
struct RangeEvent {
  enum class Kind : std::uint8_t { allocated, freed };
  Kind kind = Kind::allocated;
  Timestamp time = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// A hint deepum issued to the driver.
struct Hint {
  enum class Kind : std::uint8_t { prefetch_to_gpu, evict_to_host, discard };
  Kind kind = Kind::prefetch_to_gpu;
  Timestamp time = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
};

// GPU memory in use over time: deepum's estimate and the driver's own figure.
struct ResidentSample {
  Timestamp time = 0;
  std::uint64_t estimated_resident_bytes = 0;  // deepum's ResidencyMap
  std::uint64_t measured_used_bytes = 0;       // the driver's figure less the baseline at start; 0 unknown
};

}  // namespace deepum::core
