// Workload: what a trace says the GPU had to do, in the form the simulator replays. Each operation
// the GPU ran (kernel, copy, memset), in launch order, with its compute time and the 2 MB blocks it
// touches; the managed ranges freed along the way. docs/simulator.md lists the approximations.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "deepum/core/events.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::sim {

// A block's dense index: 0..block_count-1, in address order.
using BlockIndex = std::uint32_t;

struct WorkloadOptions {
  // A kernel's blocks are the union over every execution with its execution key (faulted blocks
  // and pointer blocks): a block resident during one execution faults in none.
  bool union_by_execution_key = true;
  // A kernel's compute time is the shortest execution with its execution key (the least stalled
  // by faults); off: each execution's own end - start.
  bool min_compute_by_execution_key = true;
  // A launch pointer touches the blocks from its address up to the next address any launch of the
  // trace pointed to in the same managed range, or the range's end (a caching allocator packs
  // tensors in its segments, so that is the most the tensor behind the pointer can span); off:
  // only the block holding the address.
  bool pointer_extents = true;
  // What a trace may claim before it is refused (WorkloadBuilder::error()) rather than replayed:
  // the managed ranges live at once (the ordered policies hold an entry per block of them), and the
  // (operation, 2 MB block) pairs its operations name, about 16 bytes each while the workload is built.
  std::uint64_t max_managed_bytes = core::kMaxTraceManagedBytes;
  std::size_t max_named_blocks = std::size_t{1} << 26;
};

struct KernelStep {
  std::uint64_t correlation_id = 0;
  std::uint64_t execution_key = 0;  // 0 when no launch was seen (copies, memsets, untraced launches)
  core::GpuOperation operation = core::GpuOperation::kernel;
  core::Timestamp start = 0;  // in the trace
  std::uint64_t compute_ns = 0;
  std::uint32_t touch_set = 0;  // index into Workload::touch_set_offsets
  std::uint64_t function = 0;   // the launched function's opaque id; 0 without a launch
  // Its launch's grid and block (0 without a launch): with the function, the shape the library's
  // loop of shapes is learned from.
  std::array<std::uint32_t, 3> grid{}, block{};
  std::uint8_t copy_kind = 0;  // a memcpy's CUpti_ActivityMemcpyKind (2: device to host); 0 unknown
  // The program's thread's own time before it issued this operation, since it issued the one
  // before (trace format 1.4: the launches' and copies' host times); 0 before a copy to the host,
  // whose gap is the thread waiting for the GPU (a synchronize, an item()), and where unknown.
  std::uint64_t host_gap_ns = 0;

  // A copy to the host: the program reads what it copies, so its thread waits for the GPU.
  bool copies_to_host() const {
    constexpr std::uint8_t kDeviceToHost = 2;  // CUPTI_ACTIVITY_MEMCPY_KIND_DTOH
    return operation == core::GpuOperation::memcpy && copy_kind == kDeviceToHost;
  }
};

// Managed blocks that stop existing before a kernel (their range was freed): dropped from the GPU
// without any transfer.
struct BlockRelease {
  std::uint32_t before_kernel = 0;
  BlockIndex first = 0;
  std::uint32_t count = 0;
};

// What the program told deepum on the host, in order, for replaying launch-ordered residency
// (OrderedPolicy): managed ranges coming and going, and its allocator's buffers (trace format 1.4).
struct HostEvent {
  enum class Kind : std::uint8_t { range_allocated, range_freed, buffer_handed_out, buffer_returned };
  std::uint32_t before_kernel = 0;  // applied before this kernel's launch is decided
  Kind kind = Kind::range_allocated;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::uint64_t stream = 0;  // buffer_returned: the stream it was freed on
};

// What a kernel's launch named (every pointer, with the bytes it reaches; 0: to the end of its
// allocation) or a copy's or memset's operands (`bytes` each), as deepum saw them on the host.
struct StepOperands {
  bool known = false;  // the trace has the launch's operands or the copy's record
  bool complete = true;
  bool unnamed_memory = false;  // it may reach memory it does not name
  std::uint64_t stream = 0;
  std::uint64_t copy_bytes = 0;        // a copy or memset: each operand's span
  std::uint32_t first = 0, count = 0;  // into Workload::operand_addresses / operand_extents
};

struct WorkloadStats {
  std::uint64_t executions = 0;
  std::uint64_t launches = 0;
  std::uint64_t launches_without_execution = 0;
  std::uint64_t faults = 0;                // fault records read
  std::uint64_t faults_from_prefetch = 0;  // access = prefetch: no kernel raised them
  std::uint64_t faults_attributed = 0;
  std::uint64_t faults_unattributed = 0;  // no execution covers their time
  std::uint64_t managed_peak_bytes = 0;   // largest sum of live managed ranges
  std::uint64_t extent_blocks = 0;        // blocks only a pointer's extent beyond its own block adds
  std::uint64_t steps_with_operands = 0;  // kernels, copies and memsets whose operands the trace has
};

struct Workload {
  std::vector<KernelStep> kernels;               // in launch order (correlation ids)
  std::vector<std::uint32_t> touch_set_offsets;  // set s is touches[offsets[s] .. offsets[s+1])
  std::vector<BlockIndex> touches;               // each set sorted, no repeats
  std::vector<core::BlockId> block_ids;          // dense index -> address >> 21, ascending
  std::vector<BlockRelease> releases;            // by before_kernel
  // Per kernel, the blocks of its own launch's managed pointer arguments (what the host knows at
  // launch time), in argument order: kernel k's are pointers[pointer_offsets[k] ..
  // pointer_offsets[k+1]). Empty offsets (a workload built by hand): no kernel has any.
  std::vector<std::uint32_t> pointer_offsets;
  std::vector<BlockIndex> pointers;
  // Per kernel (empty for a trace before format 1.4, which has neither), and the host events by
  // before_kernel.
  std::vector<StepOperands> operands;
  std::vector<std::uint64_t> operand_addresses, operand_extents;
  std::vector<HostEvent> host_events;
  std::uint32_t iterations = 1;  // repeating structure found (1: none)
  WorkloadStats stats;
  std::unordered_map<std::uint64_t, std::string> function_names;  // KernelStep::function -> name

  std::span<const BlockIndex> blocks_of(const KernelStep& kernel) const {
    return std::span(touches).subspan(
        touch_set_offsets[kernel.touch_set],
        touch_set_offsets[kernel.touch_set + 1] - touch_set_offsets[kernel.touch_set]);
  }
  std::span<const BlockIndex> blocks_of(std::size_t kernel) const { return blocks_of(kernels[kernel]); }
  std::span<const BlockIndex> pointers_of(std::size_t kernel) const {
    if (kernel + 1 >= pointer_offsets.size()) return {};
    return std::span(pointers).subspan(pointer_offsets[kernel],
                                       pointer_offsets[kernel + 1] - pointer_offsets[kernel]);
  }
  std::uint32_t block_count() const { return static_cast<std::uint32_t>(block_ids.size()); }
  std::uint64_t footprint_bytes() const { return block_ids.size() * core::kBlockBytes; }
  std::uint64_t compute_ns() const;
  std::uint32_t max_blocks_per_kernel() const;
};

struct WorkloadLoad {
  Workload workload;
  std::string error;  // the trace reader's or WorkloadBuilder's message on failure
  bool ok() const { return error.empty(); }
};

// Builds the workload from records in any order (each vector in file order). Faults go to the
// execution covering their time, as core::FaultAttributor decides: within kSlackNs of its interval,
// the latest-started one among several.
class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(WorkloadOptions options = {}) : options_(options) {}
  void add(const core::KernelLaunch& launch);
  void add(const core::KernelExecution& execution);
  void add(const core::PageFault& fault);
  void add(const core::RangeEvent& range);
  void add(const core::LaunchOperands& operands);
  void add(const core::CopyLaunch& copy);
  void add(const core::BufferEvent& buffer);
  void add(const core::FunctionName& name);
  void add(const core::TraceRecord& record);  // ignores the record types the model has no use for
  // The workload; an empty one, and error() says why, for records past the options' limits.
  Workload finish();
  const std::string& error() const { return error_; }

 private:
  struct LaunchInfo {
    std::uint64_t execution_key = 0;
    std::uint64_t function = 0;
    std::array<std::uint32_t, 3> grid{}, block{};
    std::uint32_t first_pointer = 0;
    std::uint16_t pointer_count = 0;
    std::uint64_t stream = 0;
    core::Timestamp host_time = 0;
  };
  // Builds Workload::operands and host_events once the kernels are in order.
  void place_host_side(Workload& w);
  // Gives every launch pointer of unknown size (extent 0) the bytes from it to the end of the
  // buffer of the program's allocator live at its launch, as the library's LiveBuffers does.
  void fill_extents();
  // The operands the trace recorded for an execution (after finish() sorted them), or nullptr.
  const core::LaunchOperands* operands_of(const core::KernelExecution& e) const;
  const core::CopyLaunch* copy_of(const core::KernelExecution& e) const;
  struct FaultInfo {
    core::Timestamp time = 0;
    core::BlockId block = 0;
  };

  WorkloadOptions options_;
  std::vector<std::pair<std::uint64_t, LaunchInfo>> launches_;  // correlation id, info
  std::vector<std::uint64_t> pointer_addresses_;
  std::vector<core::KernelExecution> executions_;
  std::vector<FaultInfo> faults_;
  std::vector<core::RangeEvent> ranges_;
  std::vector<core::LaunchOperands> launch_operands_;
  std::vector<core::CopyLaunch> copies_;
  std::vector<core::BufferEvent> buffers_;
  std::unordered_map<std::uint64_t, std::string> function_names_;
  WorkloadStats stats_;
  std::string error_;
};

WorkloadLoad build_workload(const core::Trace& trace, WorkloadOptions options = {});
// Streams the file through core::TraceReader: the whole trace is never held in memory.
WorkloadLoad load_workload(const std::string& path, WorkloadOptions options = {});

// The smallest period p such that the execution-key sequence repeats with period p (at least two
// whole repetitions); the number of repetitions, or 1 when there is no repeating structure.
std::uint32_t detect_iterations(std::span<const KernelStep> kernels);

// The first kernel of each of `iterations` iterations, ascending, the first being 0. With the
// period detect_iterations() found (when it found `iterations`), multiples of it; otherwise each
// run but the first of a kernel function that runs exactly `iterations` times starts an
// iteration after the first, which holds whatever came before (set-up, warm-up); among several
// such functions, the one whose runs are farthest apart at their closest (then the earliest).
// Empty when no function runs that often.
std::vector<std::uint32_t> iteration_starts(const Workload& workload, std::uint32_t iterations);

}  // namespace deepum::sim
