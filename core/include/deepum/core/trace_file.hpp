// deepum's compact trace: a versioned binary file holding a whole run (kernel launches and
// executions, page faults, migrations, managed ranges, hints, resident-memory samples, the operands
// of launches and copies, the program allocator's buffers) so the simulator can replay it through
// deepum's decisions. docs/trace-format.md is the specification.
//
// Writing runs inside someone's training job, so nothing here throws: every failure (cannot open,
// disk full) becomes a false return and a message in error().
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "deepum/core/events.hpp"

namespace deepum::core {

inline constexpr std::uint32_t kTraceMajorVersion = 1;  // a reader rejects any other major version
// Newer minors only add, so older readers skip. 1.1: kernel_execution gained operation, copy_kind, bytes.
// 1.2: migration cause deepum_eviction_done; 1.3: deepum_prefetch_done. 1.4: launch_operands,
// copy_launch and buffer_event, what the simulator replays launch-ordered residency from.
inline constexpr std::uint32_t kTraceMinorVersion = 4;

// Every address range a trace holds (a managed range, a migration, a hint, a buffer, an operand)
// ends at or below 2^57: the widest virtual address space CUDA runs in (x86-64 with 5-level
// paging; GPUs use 49 bits). The reader refuses a record past it as damage, before anything that
// reads the trace loops over or allocates for its bytes.
inline constexpr std::uint64_t kTraceAddressLimit = std::uint64_t{1} << 57;
// The most managed memory a trace's replays hold an entry per 2 MB block for: 16 TiB (8 Mi
// blocks), past any one machine's GPU and host memory together. A trace whose ranges claim more is
// refused with a message (deepum trace residency, deepum-sim), not run out of memory on.
inline constexpr std::uint64_t kMaxTraceManagedBytes = std::uint64_t{1} << 44;

// The name of a kernel function, recorded once before the function's first launch.
struct FunctionName {
  std::uint64_t function = 0;  // KernelLaunch::function
  std::string name;
};

// Free-form key/value strings about the run; the well-known keys are below.
using TraceMetadata = std::map<std::string, std::string, std::less<>>;
namespace trace_metadata {
inline constexpr std::string_view kDeviceName = "device_name";
inline constexpr std::string_view kDeviceTotalMemory = "device_total_memory";  // bytes, in decimal
inline constexpr std::string_view kDeepumVersion = "deepum_version";
inline constexpr std::string_view kCommandLine = "command_line";
inline constexpr std::string_view kStartTime = "start_time";  // wall clock, ISO 8601 UTC
}  // namespace trace_metadata

enum class TraceRecordType : std::uint8_t {
  function_name = 0x01,
  kernel_launch = 0x02,
  kernel_execution = 0x03,
  page_fault = 0x04,
  migration = 0x05,
  range_event = 0x06,
  hint = 0x07,
  resident_sample = 0x08,
  launch_operands = 0x09,  // since 1.4
  copy_launch = 0x0A,      // since 1.4
  buffer_event = 0x0B,     // since 1.4
  end = 0xFF,
};
// "kernel_launch", ...; "unknown" for a value that is not a TraceRecordType.
std::string_view record_type_name(std::uint8_t type);

// A buffered byte sink: a file it opens (close-on-exec) or a caller's stream. Errors become a
// message, never exceptions. Only the process that opened a file writes to it, so a forked child
// that exits through the destructors cannot append a second copy of the buffered bytes.
class BufferedOutput {
 public:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

  BufferedOutput() = default;
  BufferedOutput(const BufferedOutput&) = delete;
  BufferedOutput& operator=(const BufferedOutput&) = delete;
  ~BufferedOutput();  // closes, ignoring errors

  bool open(const std::string& path) noexcept;
  bool open(std::ostream& stream, std::string name) noexcept;  // the stream must outlive this
  bool write(const void* data, std::size_t bytes) noexcept;
  bool write(std::string_view text) noexcept { return write(text.data(), text.size()); }
  bool close() noexcept;  // flushes; closes a file it opened

  bool is_open() const { return file_ != nullptr || stream_ != nullptr; }
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  const std::string& name() const { return name_; }
  bool fail(std::string_view what) noexcept;  // records the first error; returns false

 private:
  bool flush() noexcept;

  std::FILE* file_ = nullptr;
  std::ostream* stream_ = nullptr;
  pid_t owner_ = 0;
  std::string name_;
  std::unique_ptr<char[]> buffer_;  // kBufferBytes, left uninitialized: only what is written is read
  std::size_t used_ = 0;
  std::string error_;
};

// Writes a compact trace. Call it from one thread at a time (deepum's tracer uses one worker
// thread), so there is no locking. The header goes out with the first write_metadata(), record or
// finish(); write_metadata() after a record is an error. A writer destroyed while still open
// finishes the trace.
class TraceWriter {
 public:
  TraceWriter() = default;
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter();

  bool open(const std::string& path) noexcept;
  bool open(std::ostream& stream, std::string name = "<stream>") noexcept;

  bool write_metadata(const TraceMetadata& metadata) noexcept;
  // Writes a function_name record the first time `function` is seen; later calls do nothing.
  bool define_function(std::uint64_t function, std::string_view name) noexcept;
  bool write(const KernelLaunch& launch) noexcept;  // at most kMaxPointers pointers are kept
  bool write(const KernelExecution& execution) noexcept;
  bool write(const PageFault& fault) noexcept;
  bool write(const Migration& migration) noexcept;
  bool write(const RangeEvent& range) noexcept;
  bool write(const Hint& hint) noexcept;
  bool write(const ResidentSample& sample) noexcept;
  // At most 65535 operands are kept; a record that lost some is marked incomplete.
  bool write(const LaunchOperands& operands) noexcept;
  bool write(const CopyLaunch& copy) noexcept;  // at most CopyLaunch::kMaxOperands operands
  bool write(const BufferEvent& buffer) noexcept;
  // Writes the end record (record count and checksum) and closes the output.
  bool finish() noexcept;

  bool ok() const { return !output_.failed(); }
  const std::string& error() const { return output_.error(); }
  std::uint64_t records_written() const { return records_; }

 private:
  enum class State : std::uint8_t { closed, opened, header_written, finished };

  bool start(bool opened) noexcept;
  bool ensure_header(const TraceMetadata& metadata) noexcept;
  bool ready_for_record() noexcept;
  bool put(const void* data, std::size_t bytes) noexcept;  // writes and checksums
  bool put_record(TraceRecordType type, std::span<const std::uint8_t> payload) noexcept;

  BufferedOutput output_;
  State state_ = State::closed;
  std::uint64_t checksum_ = 0;
  std::uint64_t records_ = 0;
  std::unordered_set<std::uint64_t> defined_functions_;
};

struct TraceHeader {
  std::uint32_t major_version = kTraceMajorVersion;
  std::uint32_t minor_version = kTraceMinorVersion;
  std::uint32_t flags = 0;  // none defined in 1.0
  TraceMetadata metadata;
};

using TraceRecord = std::variant<FunctionName, KernelLaunch, KernelExecution, PageFault, Migration,
                                 RangeEvent, Hint, ResidentSample, LaunchOperands, CopyLaunch, BufferEvent>;

// Reads a compact trace record by record, in file order, in large chunks. The end record's count
// and checksum are verified when it is reached. Every error message names the file, the byte
// offset, the record index (records count from 0 after the header) and what was wrong.
class TraceReader {
 public:
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

  TraceReader() = default;
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;
  ~TraceReader();

  bool open(const std::string& path);  // reads and checks the header
  // The bytes must outlive the reader; `name` stands for the file in messages.
  bool open_memory(std::span<const std::byte> bytes, std::string name = "<memory>");

  // The next record; nullopt after the end record was verified (finished()) or on an error.
  // Records of types newer than this reader are skipped by their length.
  std::optional<TraceRecord> next();

  const TraceHeader& header() const { return header_; }
  bool finished() const { return finished_; }
  const std::string& error() const { return error_; }
  std::uint64_t records_read() const { return records_; }  // including skipped ones
  std::uint64_t skipped_records() const { return skipped_; }

 private:
  void close_file();
  bool start();
  bool read_header();
  bool fill(std::size_t bytes);  // makes `bytes` bytes available at the cursor, if the input has them
  std::uint64_t remaining_input() const { return input_size_ - offset_; }
  void consume(std::size_t bytes);
  bool skip(std::uint64_t bytes);
  bool fail(std::uint64_t at, const std::string& what);
  bool fail_record(std::uint8_t type, std::uint64_t at, const std::string& what);
  bool fail_truncated(std::uint8_t type, std::uint64_t record_start, std::uint64_t record_bytes);
  std::optional<TraceRecord> read_end(std::uint64_t record_start, std::uint32_t payload_bytes);

  std::string name_;
  std::FILE* file_ = nullptr;
  std::vector<std::byte> buffer_;     // file input
  std::span<const std::byte> input_;  // what is available: all of memory input, or buffer_'s fill
  std::size_t cursor_ = 0;            // into input_
  std::uint64_t offset_ = 0;          // byte offset of the cursor in the file
  std::uint64_t input_size_ = 0;
  std::uint64_t checksum_ = 0;
  std::uint64_t records_ = 0;
  std::uint64_t skipped_ = 0;
  TraceHeader header_;
  bool finished_ = false;
  std::string error_;
};

// A whole trace in memory. Each vector keeps file order; TraceReader gives the interleaved order.
struct Trace {
  TraceHeader header;
  std::unordered_map<std::uint64_t, std::string> function_names;
  std::vector<KernelLaunch> launches;
  std::vector<KernelExecution> executions;
  std::vector<PageFault> faults;
  std::vector<Migration> migrations;
  std::vector<RangeEvent> ranges;
  std::vector<Hint> hints;
  std::vector<ResidentSample> resident_samples;
  std::vector<LaunchOperands> launch_operands;  // since 1.4; join launches by correlation id
  std::vector<CopyLaunch> copies;               // since 1.4
  std::vector<BufferEvent> buffer_events;       // since 1.4
  std::uint64_t skipped_records = 0;            // of types newer than this reader
};

struct TraceReadResult {
  std::optional<Trace> trace;  // set on success
  std::string error;           // set on failure
  explicit operator bool() const { return trace.has_value(); }
};

TraceReadResult read_trace(const std::string& path);
TraceReadResult read_trace_from_memory(std::span<const std::byte> bytes, std::string name = "<memory>");

struct TimeSpan {
  Timestamp first = 0;
  Timestamp last = 0;
};
// The earliest and latest timestamp of any record; nullopt for a trace without timed records.
std::optional<TimeSpan> time_span(const Trace& trace);

// A few lines: metadata, counts per record type, time span, distinct functions, bytes migrated
// each way, faults.
std::string summarize(const Trace& trace);

// The checksum of the end record: 64-bit FNV-1a, continued from `hash` (start with kFnvOffset).
inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
std::uint64_t fnv1a64(std::span<const std::byte> bytes, std::uint64_t hash = kFnvOffset);

}  // namespace deepum::core
