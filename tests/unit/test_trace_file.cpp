// The compact trace file: round trips of every record, metadata, forward compatibility, every
// class of damage a reader must name, and reading speed.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "deepum/core/trace_file.hpp"
#include "temp_file.hpp"

using namespace deepum::core;

namespace {

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text)); }

// A file under the temp directory, removed when the test ends.
void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Little-endian fields, for files built by hand as docs/trace-format.md describes them.
struct Bytes {
  std::string data;
  Bytes& u8(std::uint64_t v) { return put(v, 1); }
  Bytes& u16(std::uint64_t v) { return put(v, 2); }
  Bytes& u32(std::uint64_t v) { return put(v, 4); }
  Bytes& u64(std::uint64_t v) { return put(v, 8); }
  Bytes& text(std::string_view s) {
    data += s;
    return *this;
  }
  Bytes& put(std::uint64_t v, int width) {
    for (int i = 0; i < width; ++i) data += static_cast<char>((v >> (8 * i)) & 0xff);
    return *this;
  }
};

// Builds a trace file byte by byte, independently of TraceWriter.
struct TraceBuilder {
  Bytes file;
  std::uint64_t records = 0;

  explicit TraceBuilder(std::uint32_t major = 1, std::uint32_t minor = 0) {
    file.text("DEEPUMTR").u32(major).u32(minor).u32(0).u32(1).u32(4).text("tool").u32(4).text("test");
  }
  TraceBuilder& record(std::uint8_t type, const std::string& payload) {
    file.u8(type).u32(payload.size()).text(payload);
    ++records;
    return *this;
  }
  std::string finish(std::optional<std::uint64_t> count = {}) const {
    Bytes end = file;
    end.u8(0xFF).u32(16).u64(count.value_or(records)).u64(fnv1a64(bytes_of(file.data)));
    return end.data;
  }
};

// A kernel_execution payload as version 1.0 wrote it (no operation, copy_kind or bytes).
std::string execution_payload_1_0(std::uint64_t correlation) {
  return Bytes().u64(correlation).u64(1000).u64(2000).u32(7).u32(1).data;
}

std::string page_fault_payload(std::uint64_t address) {
  return Bytes().u64(100).u64(200).u64(address).u64(3).u32(0).u8(1).data;
}

KernelLaunch sample_launch(std::uint64_t correlation, std::uint16_t pointers) {
  KernelLaunch launch;
  launch.correlation_id = correlation;
  launch.execution_key = 0xfeedface00000000ull + correlation;
  launch.function = 0x7f0000001000ull;
  launch.stream = 0x55550000ull;
  launch.host_time = 1'000'000 + correlation * 10;
  launch.grid = {1024, 2, 3};
  launch.block = {256, 1, 1};
  launch.pointer_count = pointers;
  for (std::uint16_t i = 0; i < pointers; ++i) launch.pointers[i] = 0x7000'0000'0000ull + i * kBlockBytes;
  return launch;
}

void check_same(const KernelLaunch& a, const KernelLaunch& b) {
  CHECK(a.correlation_id == b.correlation_id);
  CHECK(a.execution_key == b.execution_key);
  CHECK(a.function == b.function);
  CHECK(a.stream == b.stream);
  CHECK(a.host_time == b.host_time);
  CHECK(a.grid == b.grid);
  CHECK(a.block == b.block);
  CHECK(a.pointer_count == b.pointer_count);
  CHECK(a.pointers_truncated == b.pointers_truncated);
  CHECK(a.pointers == b.pointers);
}

// One record of every type, in a known order.
struct Sample {
  TraceMetadata metadata{{std::string(trace_metadata::kDeviceName), "NVIDIA H100 80GB HBM3"},
                         {std::string(trace_metadata::kDeviceTotalMemory), "85520809984"},
                         {std::string(trace_metadata::kCommandLine), "python train.py --batch 64"},
                         {"empty", ""}};
  KernelLaunch launch0 = sample_launch(7, 0);
  KernelLaunch launch3 = sample_launch(8, 3);
  KernelLaunch launch_full = sample_launch(9, KernelLaunch::kMaxPointers);
  KernelExecution execution{7, 2'000'000, 2'500'000, 13, 1};
  PageFault fault{3'000'000, 3'000'900, 0x7000'0020'0000ull, 17, FaultAccess::write, 1};
  Migration h2d{3'100'000,
                3'200'000,
                0x7000'0020'0000ull,
                kBlockBytes,
                MigrationDirection::host_to_device,
                MigrationCause::deepum_prefetch_done};  // the newest cause (1.3)
  Migration d2h{3'300'000,
                3'400'000,
                0x7000'0000'0000ull,
                4096,
                MigrationDirection::device_to_host,
                MigrationCause::deepum_eviction_done};  // since 1.2
  RangeEvent allocated{RangeEvent::Kind::allocated, 500, 0x7000'0000'0000ull, 64 * kBlockBytes};
  RangeEvent freed{RangeEvent::Kind::freed, 9'000'500, 0x7000'0000'0000ull, 64 * kBlockBytes};
  Hint prefetch{Hint::Kind::prefetch_to_gpu, 1'500'000, 0x7000'0040'0000ull, 2 * kBlockBytes};
  Hint discard{Hint::Kind::discard, 1'600'000, 0x7000'0080'0000ull, kBlockBytes};
  ResidentSample resident{4'000'000, 6 * kBlockBytes, 123456789};
  // Since 1.4.
  LaunchOperands operands{.correlation_id = 8,
                          .pointers = {launch3.pointers[0], launch3.pointers[1], launch3.pointers[2]},
                          .extents = {kBlockBytes, 0, 3 * kBlockBytes}};
  CopyLaunch copy{.correlation_id = 901,
                  .stream = 0x55550000ull,
                  .host_time = 1'700'000,
                  .operand_count = 2,
                  .operands = {0x7000'0000'0000ull, 0x7000'0040'0000ull},
                  .bytes = 65536};
  BufferEvent returned{.kind = BufferEvent::Kind::returned,
                       .time = 1'800'000,
                       .address = 0x7000'0040'0000ull,
                       .bytes = 2 * kBlockBytes,
                       .stream = 0x55550000ull};

  Sample() { launch_full.pointers_truncated = true; }

  void write_to(TraceWriter& writer) const {
    REQUIRE(writer.write_metadata(metadata));
    REQUIRE(writer.write(allocated));
    REQUIRE(writer.define_function(launch0.function, "void gemm<float>(float const*, float*)"));
    REQUIRE(writer.write(launch0));
    REQUIRE(writer.write(launch3));
    REQUIRE(writer.write(operands));
    REQUIRE(writer.write(launch_full));
    REQUIRE(writer.write(copy));
    REQUIRE(writer.write(returned));
    REQUIRE(writer.write(prefetch));
    REQUIRE(writer.write(discard));
    REQUIRE(writer.write(execution));
    REQUIRE(writer.write(fault));
    REQUIRE(writer.write(h2d));
    REQUIRE(writer.write(d2h));
    REQUIRE(writer.write(resident));
    REQUIRE(writer.write(freed));
  }
  static constexpr std::uint64_t kRecords = 16;

  std::string bytes() const {
    std::ostringstream out;
    TraceWriter writer;
    REQUIRE(writer.open(out, "sample"));
    write_to(writer);
    REQUIRE(writer.finish());
    CHECK(writer.records_written() == kRecords);
    return out.str();
  }
};

void check_sample(const Trace& trace, const Sample& s) {
  CHECK(trace.header.major_version == 1);
  CHECK(trace.header.minor_version == kTraceMinorVersion);
  CHECK(trace.header.metadata == s.metadata);
  REQUIRE(trace.function_names.size() == 1);
  CHECK(trace.function_names.at(s.launch0.function) == "void gemm<float>(float const*, float*)");
  REQUIRE(trace.launches.size() == 3);
  check_same(trace.launches[0], s.launch0);
  check_same(trace.launches[1], s.launch3);
  check_same(trace.launches[2], s.launch_full);
  REQUIRE(trace.executions.size() == 1);
  CHECK(trace.executions[0].correlation_id == 7);
  CHECK(trace.executions[0].start == 2'000'000);
  CHECK(trace.executions[0].end == 2'500'000);
  CHECK(trace.executions[0].stream_id == 13);
  CHECK(trace.executions[0].device == 1);
  CHECK(trace.executions[0].operation == GpuOperation::kernel);
  CHECK(trace.executions[0].copy_kind == 0);
  CHECK(trace.executions[0].bytes == 0);
  REQUIRE(trace.faults.size() == 1);
  CHECK(trace.faults[0].start == s.fault.start);
  CHECK(trace.faults[0].end == s.fault.end);
  CHECK(trace.faults[0].address == s.fault.address);
  CHECK(trace.faults[0].fault_count == 17);
  CHECK(trace.faults[0].access == FaultAccess::write);
  CHECK(trace.faults[0].device == 1);
  REQUIRE(trace.migrations.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const Migration& expected = i == 0 ? s.h2d : s.d2h;
    CHECK(trace.migrations[i].start == expected.start);
    CHECK(trace.migrations[i].end == expected.end);
    CHECK(trace.migrations[i].address == expected.address);
    CHECK(trace.migrations[i].bytes == expected.bytes);
    CHECK(trace.migrations[i].direction == expected.direction);
    CHECK(trace.migrations[i].cause == expected.cause);
  }
  REQUIRE(trace.ranges.size() == 2);
  CHECK(trace.ranges[0].kind == RangeEvent::Kind::allocated);
  CHECK(trace.ranges[1].kind == RangeEvent::Kind::freed);
  CHECK(trace.ranges[1].time == 9'000'500);
  CHECK(trace.ranges[1].address == s.freed.address);
  CHECK(trace.ranges[1].bytes == s.freed.bytes);
  REQUIRE(trace.hints.size() == 2);
  CHECK(trace.hints[0].kind == Hint::Kind::prefetch_to_gpu);
  CHECK(trace.hints[0].time == s.prefetch.time);
  CHECK(trace.hints[0].address == s.prefetch.address);
  CHECK(trace.hints[0].bytes == s.prefetch.bytes);
  CHECK(trace.hints[1].kind == Hint::Kind::discard);
  REQUIRE(trace.resident_samples.size() == 1);
  CHECK(trace.resident_samples[0].time == 4'000'000);
  CHECK(trace.resident_samples[0].estimated_resident_bytes == 6 * kBlockBytes);
  CHECK(trace.resident_samples[0].measured_used_bytes == 123456789);
  REQUIRE(trace.launch_operands.size() == 1);
  CHECK(trace.launch_operands[0].correlation_id == 8);
  CHECK(trace.launch_operands[0].complete);
  CHECK_FALSE(trace.launch_operands[0].unnamed_memory);
  CHECK(trace.launch_operands[0].pointers == s.operands.pointers);
  CHECK(trace.launch_operands[0].extents == s.operands.extents);
  REQUIRE(trace.copies.size() == 1);
  CHECK(trace.copies[0].correlation_id == 901);
  CHECK(trace.copies[0].stream == s.copy.stream);
  CHECK(trace.copies[0].host_time == 1'700'000);
  CHECK(trace.copies[0].operation == GpuOperation::memcpy);
  CHECK(trace.copies[0].operand_count == 2);
  CHECK(trace.copies[0].operands == s.copy.operands);
  CHECK(trace.copies[0].bytes == 65536);
  CHECK_FALSE(trace.copies[0].unnamed_memory);
  REQUIRE(trace.buffer_events.size() == 1);
  CHECK(trace.buffer_events[0].kind == BufferEvent::Kind::returned);
  CHECK(trace.buffer_events[0].time == 1'800'000);
  CHECK(trace.buffer_events[0].address == s.returned.address);
  CHECK(trace.buffer_events[0].bytes == s.returned.bytes);
  CHECK(trace.buffer_events[0].stream == s.returned.stream);
  CHECK(trace.skipped_records == 0);  // every type of this revision is read, none skipped
}

// A little-endian field of a written file.
std::uint64_t field_at(const std::string& bytes, std::size_t at, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i)
    value |= std::uint64_t{static_cast<std::uint8_t>(bytes.at(at + i))} << (8 * i);
  return value;
}

// Payloads of the 1.4 records, as docs/trace-format.md lays them out.
std::string copy_launch_payload(std::uint8_t operation, std::uint16_t operand_count) {
  return Bytes()
      .u64(1)
      .u64(2)
      .u64(3)
      .u8(operation)
      .u16(operand_count)
      .u64(0x1000)
      .u64(0x2000)
      .u64(64)
      .u8(0)
      .data;
}
std::string buffer_event_payload(std::uint8_t kind) {
  return Bytes().u8(kind).u64(10).u64(0x7000'0000'0000ull).u64(4096).u64(0x5555).data;
}

std::string read_error(const std::string& bytes, const std::string& name = "damaged.trace") {
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes), name);
  CHECK_FALSE(result);
  return result.error;
}

}  // namespace

TEST_CASE("every record type and the metadata round-trip through memory") {
  const Sample sample;
  const std::string bytes = sample.bytes();
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  check_sample(*result.trace, sample);
}

TEST_CASE("a trace round-trips through a file on disk and keeps its record order") {
  const Sample sample;
  TempFile file("roundtrip");
  {
    TraceWriter writer;
    REQUIRE(writer.open(file.str()));
    sample.write_to(writer);
    REQUIRE(writer.finish());
  }
  const TraceReadResult result = read_trace(file.str());
  REQUIRE_MESSAGE(result, result.error);
  check_sample(*result.trace, sample);

  TraceReader reader;
  REQUIRE(reader.open(file.str()));
  CHECK(reader.header().metadata.at("empty").empty());
  std::vector<std::size_t> kinds;
  while (std::optional<TraceRecord> record = reader.next()) kinds.push_back(record->index());
  CHECK_MESSAGE(reader.finished(), reader.error());
  CHECK(reader.records_read() == Sample::kRecords);
  // range, function name, 2 launches, operands, launch, copy, buffer, 2 hints, execution, fault,
  // 2 migrations, sample, range
  CHECK(kinds == std::vector<std::size_t>{5, 0, 1, 1, 8, 1, 9, 10, 6, 6, 2, 3, 4, 4, 7, 5});
  CHECK_FALSE(reader.next());
}

TEST_CASE("copies and memsets round-trip with their operation, copy kind and bytes (version 1.1)") {
  const KernelExecution kernel{7, 2'000'000, 2'500'000, 13, 1};
  const KernelExecution copy{
      900, 2'600'000, 2'700'000, 14, 1, GpuOperation::memcpy, 1, std::uint64_t{4} << 20};
  const KernelExecution set{
      901, 2'800'000, 2'810'000, 14, 0, GpuOperation::memset, 0, std::uint64_t{1} << 20};
  std::ostringstream out;
  TraceWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.write(kernel));
  REQUIRE(writer.write(copy));
  REQUIRE(writer.write(set));
  REQUIRE(writer.finish());
  const std::string bytes = out.str();
  // Header (24), then three 5 + 42-byte kernel_execution records, then the end record (21).
  REQUIRE(bytes.size() == 24 + 3 * (5 + 42) + 21);
  CHECK(static_cast<std::uint8_t>(bytes[24]) == 0x03);
  CHECK(static_cast<std::uint8_t>(bytes[25]) == 42);
  CHECK(static_cast<std::uint8_t>(bytes[12]) == kTraceMinorVersion);

  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->header.minor_version == kTraceMinorVersion);
  REQUIRE(result.trace->executions.size() == 3);
  const KernelExecution* expected[] = {&kernel, &copy, &set};
  for (std::size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    const KernelExecution& e = result.trace->executions[i];
    CHECK(e.correlation_id == expected[i]->correlation_id);
    CHECK(e.start == expected[i]->start);
    CHECK(e.end == expected[i]->end);
    CHECK(e.stream_id == expected[i]->stream_id);
    CHECK(e.device == expected[i]->device);
    CHECK(e.operation == expected[i]->operation);
    CHECK(e.copy_kind == expected[i]->copy_kind);
    CHECK(e.bytes == expected[i]->bytes);
  }
  CHECK(summarize(*result.trace).find("1 kernel executions, 1 memcpys, 1 memsets") != std::string::npos);
}

TEST_CASE("a version 1.0 trace still reads: its executions are kernels") {
  TraceBuilder old_file(1, 0);
  old_file.record(0x03, execution_payload_1_0(41));
  old_file.record(0x04, page_fault_payload(0xabc));
  const TraceReadResult result = read_trace_from_memory(bytes_of(old_file.finish()));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->header.minor_version == 0);
  REQUIRE(result.trace->executions.size() == 1);
  const KernelExecution& e = result.trace->executions[0];
  CHECK(e.correlation_id == 41);
  CHECK(e.start == 1000);
  CHECK(e.end == 2000);
  CHECK(e.stream_id == 7);
  CHECK(e.device == 1);
  CHECK(e.operation == GpuOperation::kernel);
  CHECK(e.copy_kind == 0);
  CHECK(e.bytes == 0);
  CHECK(result.trace->faults.size() == 1);

  SUBCASE("a 1.0 file with a 1.1-sized execution is corrupt") {
    TraceBuilder bad(1, 0);
    bad.record(0x03, execution_payload_1_0(1) + Bytes().u8(1).u8(1).u64(5).data);
    CHECK(read_error(bad.finish()) ==
          "damaged.trace: record 0 (kernel_execution) at byte offset 40: payload length 42 does not fit its "
          "type: a version 1.0 kernel_execution payload is 32 bytes");
  }
  SUBCASE("a 1.1 file with a 1.0-sized execution is corrupt") {
    TraceBuilder bad(1, 1);
    bad.record(0x03, execution_payload_1_0(1));
    CHECK(read_error(bad.finish()) ==
          "damaged.trace: record 0 (kernel_execution) at byte offset 40: payload length 32 does not fit its "
          "type: a kernel_execution payload is 42 bytes");
  }
  SUBCASE("an operation that does not exist") {
    TraceBuilder bad(1, 1);
    bad.record(0x03, execution_payload_1_0(1) + Bytes().u8(3).u8(0).u64(0).data);
    CHECK(read_error(bad.finish()) ==
          "damaged.trace: record 0 (kernel_execution) at byte offset 40: operation 3 is not a GPU operation");
  }
}

TEST_CASE("an execution of a newer minor revision keeps the fields this reader knows") {
  // What a 1.0 reader does with a 1.1 file, one revision on: appended fields are ignored.
  TraceBuilder newer(1, kTraceMinorVersion + 1);
  newer.record(0x03, execution_payload_1_0(5) + Bytes().u8(1).u8(2).u64(4096).data + "appended field");
  const TraceReadResult result = read_trace_from_memory(bytes_of(newer.finish()));
  REQUIRE_MESSAGE(result, result.error);
  REQUIRE(result.trace->executions.size() == 1);
  CHECK(result.trace->executions[0].correlation_id == 5);
  CHECK(result.trace->executions[0].operation == GpuOperation::memcpy);
  CHECK(result.trace->executions[0].copy_kind == 2);
  CHECK(result.trace->executions[0].bytes == 4096);
}

TEST_CASE("a function is named once, however often it is defined") {
  std::ostringstream out;
  TraceWriter writer;
  REQUIRE(writer.open(out));
  CHECK(writer.define_function(1, "first"));
  CHECK(writer.define_function(1, "second"));
  CHECK(writer.define_function(2, ""));
  CHECK(writer.records_written() == 2);
  REQUIRE(writer.finish());
  const std::string bytes = out.str();
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->function_names.at(1) == "first");
  CHECK(result.trace->function_names.at(2).empty());
  CHECK(result.trace->header.metadata.empty());
}

TEST_CASE("a launch claiming more pointers than it holds keeps kMaxPointers and is marked truncated") {
  KernelLaunch launch = sample_launch(1, KernelLaunch::kMaxPointers);
  launch.pointer_count = 200;
  std::ostringstream out;
  TraceWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.write(launch));
  REQUIRE(writer.finish());
  const std::string bytes = out.str();
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->launches.at(0).pointer_count == KernelLaunch::kMaxPointers);
  CHECK(result.trace->launches.at(0).pointers_truncated);
  CHECK(result.trace->launches.at(0).pointers == launch.pointers);
}

TEST_CASE("an empty trace is valid") {
  std::ostringstream out;
  TraceWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.finish());
  CHECK(writer.finish());  // finishing twice is harmless
  const std::string bytes = out.str();
  CHECK(bytes.size() == 24 + 21);  // fixed header and end record
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->launches.empty());
  CHECK(summarize(*result.trace).find("time span: none") != std::string::npos);
}

TEST_CASE("TraceWriter reports misuse and I/O errors through error(), never by throwing") {
  SUBCASE("nothing open") {
    TraceWriter writer;
    CHECK_FALSE(writer.write(Hint{}));
    CHECK(writer.error() == "no trace is open");
  }
  SUBCASE("metadata after a record") {
    std::ostringstream out;
    TraceWriter writer;
    REQUIRE(writer.open(out));
    REQUIRE(writer.write(Hint{}));
    CHECK_FALSE(writer.write_metadata({{"k", "v"}}));
    CHECK(writer.error() == "write_metadata() must come before the first record");
  }
  SUBCASE("a record after finish") {
    std::ostringstream out;
    TraceWriter writer;
    REQUIRE(writer.open(out));
    REQUIRE(writer.finish());
    CHECK_FALSE(writer.write(Hint{}));
    CHECK(writer.error() == "the trace is already finished");
  }
  SUBCASE("a path that cannot be opened") {
    TraceWriter writer;
    CHECK_FALSE(writer.open("/nonexistent-deepum-dir/run.trace"));
    CHECK(writer.error().find("cannot open /nonexistent-deepum-dir/run.trace for writing") == 0);
    CHECK(writer.error().find("No such file or directory") != std::string::npos);
  }
  SUBCASE("a device, which deepum does not write to") {
    TraceWriter writer;
    CHECK_FALSE(writer.open("/dev/full"));
    CHECK(writer.error() == "cannot open /dev/full for writing: a character device, not a regular file");
  }
  SUBCASE("a write that fails (a file size limit stands in for a full disk)") {
    TempFile file("full");
    rlimit saved{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &saved) == 0);
    rlimit small = saved;
    small.rlim_cur = 64 * 1024;
    const auto saved_handler = std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    TraceWriter writer;
    const bool opened = writer.open(file.str());
    bool all_written = opened;
    for (int i = 0; i < 20000 && all_written; ++i) all_written = writer.write(sample_launch(1, 24));
    const bool finished = writer.finish();
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, saved_handler);
    REQUIRE(opened);
    CHECK_FALSE(all_written);  // the first 1 MiB flush fails
    CHECK_FALSE(finished);
    CHECK(writer.error() == "writing " + file.str() + ": File too large");
  }
}

TEST_CASE("a forked child leaves its parent's trace alone") {
  TempFile file("fork");
  TraceWriter writer;
  REQUIRE(writer.open(file.str()));
  REQUIRE(writer.write(Hint{}));
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    writer.write(Hint{});
    writer.finish();  // would append the buffered records and an end record to the shared file
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(writer.write(ResidentSample{}));
  REQUIRE(writer.finish());
  const TraceReadResult result = read_trace(file.str());
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->hints.size() == 1);
  CHECK(result.trace->resident_samples.size() == 1);
}

TEST_CASE("records of a newer minor revision are skipped by their length") {
  TraceBuilder newer(1, kTraceMinorVersion + 1);
  newer.record(0x40, std::string(std::size_t{5} << 20, 'x'));  // unknown here, and longer than a read chunk
  newer.record(0x04, page_fault_payload(0xabc) + "appended field");           // a longer page_fault
  newer.record(0x05, Bytes().u64(1).u64(2).u64(3).u64(4).u8(0).u8(42).data);  // a cause added later
  const std::string bytes = newer.finish();
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->header.minor_version == kTraceMinorVersion + 1);
  CHECK(result.trace->header.metadata.at("tool") == "test");
  CHECK(result.trace->skipped_records == 1);
  REQUIRE(result.trace->faults.size() == 1);
  CHECK(result.trace->faults[0].address == 0xabc);
  CHECK(result.trace->faults[0].access == FaultAccess::read);
  REQUIRE(result.trace->migrations.size() == 1);
  CHECK(result.trace->migrations[0].cause == MigrationCause::unknown);
  CHECK(summarize(*result.trace).find("1 of newer types skipped") != std::string::npos);

  TempFile file("newer");  // the file reader skips across its chunk refills too
  write_file(file.str(), bytes);
  const TraceReadResult from_file = read_trace(file.str());
  REQUIRE_MESSAGE(from_file, from_file.error);
  CHECK(from_file.trace->faults.size() == 1);
}

TEST_CASE("launch operands, copies and buffer events have the documented layout and round-trip (1.4)") {
  LaunchOperands many;  // more operands than one write batch holds; the last extent is missing
  many.correlation_id = 77;
  many.complete = false;
  many.unnamed_memory = true;
  for (std::uint64_t i = 0; i < 40; ++i) many.pointers.push_back(0x7000'0000'0000ull + i * kBlockBytes);
  for (std::uint64_t i = 0; i < 39; ++i) many.extents.push_back(i * 4096 + 1);
  const LaunchOperands none{78, true, false, {}, {}};
  // Operands past operand_count are not written: the file holds 0 there.
  const CopyLaunch memset_launch{
      902, 0x5555, 1'900'000, GpuOperation::memset, 1, {0x7000'0000'0000ull, 0xdead}, 4096, false};
  const CopyLaunch undecoded{903, 0, 2'000'000, GpuOperation::memcpy, 0, {}, 0, true};
  const BufferEvent handed{BufferEvent::Kind::handed_out, 2'100'000, 0x7000'0080'0000ull, 3 * kBlockBytes, 0};
  std::ostringstream out;
  TraceWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.write(many));
  REQUIRE(writer.write(none));
  REQUIRE(writer.write(memset_launch));
  REQUIRE(writer.write(undecoded));
  REQUIRE(writer.write(handed));
  REQUIRE(writer.finish());
  const std::string bytes = out.str();

  // Header (24); launch_operands 5 + 11 + 16 per operand; copy_launch 5 + 52; buffer_event 5 + 33;
  // the end record (21).
  constexpr std::size_t kMany = 24, kNone = kMany + 5 + 11 + 40 * 16, kMemset = kNone + 5 + 11;
  constexpr std::size_t kUndecoded = kMemset + 5 + 52, kHanded = kUndecoded + 5 + 52;
  REQUIRE(bytes.size() == kHanded + 5 + 33 + 21);
  CHECK(field_at(bytes, 12, 4) == 4);  // minor version
  CHECK(field_at(bytes, kMany, 1) == 0x09);
  CHECK(field_at(bytes, kMany + 1, 4) == 11 + 40 * 16);
  CHECK(field_at(bytes, kMany + 5, 8) == 77);
  CHECK(field_at(bytes, kMany + 13, 1) == 0x02);  // bit 1 unnamed_memory; bit 0 (complete) clear
  CHECK(field_at(bytes, kMany + 14, 2) == 40);
  CHECK(field_at(bytes, kMany + 16, 8) == many.pointers[0]);
  CHECK(field_at(bytes, kMany + 24, 8) == many.extents[0]);
  CHECK(field_at(bytes, kMany + 16 + 39 * 16 + 8, 8) == 0);  // the missing extent
  CHECK(field_at(bytes, kNone + 5 + 8, 1) == 0x01);          // complete, nothing unnamed
  CHECK(field_at(bytes, kMemset, 1) == 0x0A);
  CHECK(field_at(bytes, kMemset + 1, 4) == 52);
  CHECK(field_at(bytes, kMemset + 5, 8) == 902);
  CHECK(field_at(bytes, kMemset + 13, 8) == 0x5555);
  CHECK(field_at(bytes, kMemset + 21, 8) == 1'900'000);
  CHECK(field_at(bytes, kMemset + 29, 1) == 2);  // memset
  CHECK(field_at(bytes, kMemset + 30, 2) == 1);
  CHECK(field_at(bytes, kMemset + 32, 8) == 0x7000'0000'0000ull);
  CHECK(field_at(bytes, kMemset + 40, 8) == 0);
  CHECK(field_at(bytes, kMemset + 48, 8) == 4096);
  CHECK(field_at(bytes, kMemset + 56, 1) == 0);
  CHECK(field_at(bytes, kUndecoded + 56, 1) == 1);
  CHECK(field_at(bytes, kHanded, 1) == 0x0B);
  CHECK(field_at(bytes, kHanded + 1, 4) == 33);
  CHECK(field_at(bytes, kHanded + 5, 1) == 0);  // handed out
  CHECK(field_at(bytes, kHanded + 6, 8) == 2'100'000);
  CHECK(field_at(bytes, kHanded + 14, 8) == handed.address);
  CHECK(field_at(bytes, kHanded + 22, 8) == handed.bytes);
  CHECK(field_at(bytes, kHanded + 30, 8) == 0);

  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  const Trace& trace = *result.trace;
  REQUIRE(trace.launch_operands.size() == 2);
  CHECK(trace.launch_operands[0].correlation_id == 77);
  CHECK_FALSE(trace.launch_operands[0].complete);
  CHECK(trace.launch_operands[0].unnamed_memory);
  CHECK(trace.launch_operands[0].pointers == many.pointers);
  std::vector<std::uint64_t> extents = many.extents;
  extents.push_back(0);
  CHECK(trace.launch_operands[0].extents == extents);
  CHECK(trace.launch_operands[1].correlation_id == 78);
  CHECK(trace.launch_operands[1].complete);
  CHECK(trace.launch_operands[1].pointers.empty());
  CHECK(trace.launch_operands[1].extents.empty());
  REQUIRE(trace.copies.size() == 2);
  CHECK(trace.copies[0].operation == GpuOperation::memset);
  CHECK(trace.copies[0].operand_count == 1);
  CHECK(trace.copies[0].operands == std::array<std::uint64_t, 2>{0x7000'0000'0000ull, 0});
  CHECK(trace.copies[0].bytes == 4096);
  CHECK(trace.copies[1].correlation_id == 903);
  CHECK(trace.copies[1].operand_count == 0);
  CHECK(trace.copies[1].unnamed_memory);
  REQUIRE(trace.buffer_events.size() == 1);
  CHECK(trace.buffer_events[0].kind == BufferEvent::Kind::handed_out);
  CHECK(trace.buffer_events[0].time == 2'100'000);
  CHECK(trace.buffer_events[0].address == handed.address);
  CHECK(trace.buffer_events[0].bytes == handed.bytes);
  CHECK(trace.skipped_records == 0);
  // Copies and buffer events are timed records; launch operands are not (they join by correlation id).
  const std::optional<TimeSpan> span = time_span(trace);
  REQUIRE(span);
  CHECK(span->first == 1'900'000);
  CHECK(span->last == 2'100'000);
  CHECK(summarize(trace).find("2 launch operands, 2 copy launches, 1 buffer events") != std::string::npos);
}

TEST_CASE("a launch's operands past 65535 are dropped and the record is marked incomplete") {
  LaunchOperands huge;
  huge.correlation_id = 3;
  for (std::uint64_t i = 0; i < 65'540; ++i) {
    huge.pointers.push_back(0x7000'0000'0000ull + i * 64);
    huge.extents.push_back(64);
  }
  std::ostringstream out;
  TraceWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.write(huge));
  REQUIRE(writer.finish());
  const std::string bytes = out.str();
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  REQUIRE(result.trace->launch_operands.size() == 1);
  const LaunchOperands& read = result.trace->launch_operands[0];
  CHECK_FALSE(read.complete);
  REQUIRE(read.pointers.size() == 65'535);
  CHECK(read.pointers.back() == huge.pointers[65'534]);
  CHECK(read.extents.size() == 65'535);
}

TEST_CASE("damaged 1.4 records are rejected with the record and the problem named") {
  TraceBuilder builder(1, 4);
  SUBCASE("a launch_operands payload that holds fewer operands than its count") {
    builder.record(0x09, Bytes().u64(5).u8(1).u16(3).u64(1).u64(2).u64(3).u64(4).data);
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (launch_operands) at byte offset 40: payload length 43 does not fit its "
          "type: a launch_operands payload with 3 operands is 59 bytes");
  }
  SUBCASE("a launch_operands payload shorter than its fixed fields") {
    builder.record(0x09, Bytes().u64(5).u8(1).data);
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (launch_operands) at byte offset 40: payload length 9 does not fit its "
          "type: a launch_operands payload is at least 11 bytes");
  }
  SUBCASE("launch_operands flags this version does not define") {
    builder.record(0x09, Bytes().u64(5).u8(0x05).u16(0).data);
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (launch_operands) at byte offset 40: flags 0x05 set bits version 1.4 does "
          "not define");
  }
  SUBCASE("a copy_launch of the wrong length") {
    builder.record(0x0A, copy_launch_payload(1, 1).substr(1));
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (copy_launch) at byte offset 40: payload length 51 does not fit its type: "
          "a copy_launch payload is 52 bytes");
  }
  SUBCASE("a copy_launch whose operation is a kernel") {
    builder.record(0x0A, copy_launch_payload(0, 1));
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (copy_launch) at byte offset 40: operation 0 is not a copy operation (1 "
          "memcpy, 2 memset)");
  }
  SUBCASE("a copy_launch operation that does not exist") {
    builder.record(0x0A, copy_launch_payload(3, 1));
    CHECK(read_error(builder.finish()).find("operation 3 is not a copy operation") != std::string::npos);
  }
  SUBCASE("a copy_launch with more operands than a copy holds") {
    builder.record(0x0A, copy_launch_payload(1, 3));
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (copy_launch) at byte offset 40: operand_count 3 is more than the 2 "
          "operands a copy holds");
  }
  SUBCASE("a buffer_event kind that does not exist") {
    builder.record(0x0B, buffer_event_payload(2));
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (buffer_event) at byte offset 40: kind 2 is not a buffer event kind");
  }
  SUBCASE("a buffer_event of the wrong length") {
    builder.record(0x0B, buffer_event_payload(0) + "x");
    CHECK(
        read_error(builder.finish()) ==
        "damaged.trace: record 0 (buffer_event) at byte offset 40: payload length 34 does not fit its type: "
        "a buffer_event payload is 33 bytes");
  }
  SUBCASE("a 1.4 record type in a 1.3 file") {
    TraceBuilder old_file(1, 3);
    old_file.record(0x0B, buffer_event_payload(0));
    CHECK(read_error(old_file.finish()) ==
          "damaged.trace: record 0 (buffer_event) at byte offset 40: record type 0x0b is new in version 1.4; "
          "version 1.3 has no such type, so the file is corrupt");
  }
}

TEST_CASE("files of 1.3 still read, and a newer minor's additions to the 1.4 records are ignored") {
  TraceBuilder old_file(1, 3);
  old_file.record(0x04, page_fault_payload(0xabc));
  const TraceReadResult old_result = read_trace_from_memory(bytes_of(old_file.finish()));
  REQUIRE_MESSAGE(old_result, old_result.error);
  CHECK(old_result.trace->faults.size() == 1);
  CHECK(old_result.trace->launch_operands.empty());
  CHECK(old_result.trace->copies.empty());
  CHECK(old_result.trace->buffer_events.empty());

  TraceBuilder newer(1, kTraceMinorVersion + 1);
  // Flag bits and fields this reader does not know, appended after the fields it does.
  newer.record(0x09, Bytes().u64(9).u8(0x81).u16(1).u64(0x7000'0000'0000ull).u64(4096).data + "appended");
  newer.record(0x0A, copy_launch_payload(2, 2) + "appended");
  newer.record(0x0B, buffer_event_payload(1) + "appended");
  const TraceReadResult result = read_trace_from_memory(bytes_of(newer.finish()));
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->skipped_records == 0);
  REQUIRE(result.trace->launch_operands.size() == 1);
  CHECK(result.trace->launch_operands[0].correlation_id == 9);
  CHECK(result.trace->launch_operands[0].complete);
  CHECK_FALSE(result.trace->launch_operands[0].unnamed_memory);
  CHECK(result.trace->launch_operands[0].pointers == std::vector<std::uint64_t>{0x7000'0000'0000ull});
  CHECK(result.trace->launch_operands[0].extents == std::vector<std::uint64_t>{4096});
  REQUIRE(result.trace->copies.size() == 1);
  CHECK(result.trace->copies[0].operation == GpuOperation::memset);
  CHECK(result.trace->copies[0].operands == std::array<std::uint64_t, 2>{0x1000, 0x2000});
  REQUIRE(result.trace->buffer_events.size() == 1);
  CHECK(result.trace->buffer_events[0].kind == BufferEvent::Kind::returned);
  CHECK(result.trace->buffer_events[0].stream == 0x5555);
}

TEST_CASE("damaged or foreign files are rejected with the file, offset, record and problem named") {
  const std::string good = Sample().bytes();

  SUBCASE("not a trace") {
    CHECK(read_error("PK\x03\x04 a zip file, not a trace") ==
          "damaged.trace: byte offset 0: not a deepum trace (it does not start with \"DEEPUMTR\")");
  }
  SUBCASE("a newer major version") {
    CHECK(
        read_error(TraceBuilder(2, 0).finish()) ==
        "damaged.trace: byte offset 8: unsupported trace version 2.0: this deepum reads version 1.x; a newer "
        "deepum wrote it, so read it with that one");
  }
  SUBCASE("an empty file") {
    CHECK(read_error("") ==
          "damaged.trace: truncated: the file ends at byte offset 0, inside the 24-byte header; was the "
          "program "
          "killed before deepum finished the trace?");
  }
  SUBCASE("cut inside the metadata") {
    const std::string error = read_error(good.substr(0, 40));
    CHECK(
        error.find("truncated: the file ends at byte offset 40, inside metadata entry 0 of 4 at byte offset "
                   "24") != std::string::npos);
  }
  SUBCASE("missing its end record") {
    const std::string cut = good.substr(0, good.size() - 21);
    CHECK(read_error(cut) == "damaged.trace: truncated: the file ends after 16 records at byte offset " +
                                 std::to_string(cut.size()) +
                                 "; was the program killed before deepum finished the trace?");
  }
  SUBCASE("cut inside a record") {
    TraceBuilder builder;
    builder.record(0x04, page_fault_payload(1));
    const std::string cut = builder.finish().substr(0, builder.file.data.size() - 10);
    CHECK(read_error(cut) ==
          "damaged.trace: truncated: the file ends after 0 records at byte offset " +
              std::to_string(cut.size()) + ", inside record 0 (page_fault), which starts at byte offset " +
              std::to_string(builder.file.data.size() - 42) +
              " and needs 42 bytes; was the program killed before deepum finished the trace?");
  }
  SUBCASE("a record length that does not fit its type") {
    TraceBuilder builder;
    builder.record(0x03, std::string(32, '\0'));
    builder.record(0x04, page_fault_payload(1).substr(1));
    const std::string error = read_error(builder.finish());
    CHECK(error == "damaged.trace: record 1 (page_fault) at byte offset " +
                       std::to_string(builder.file.data.size() - 41) +
                       ": payload length 36 does not fit its type: a page_fault payload is 37 bytes");
  }
  SUBCASE("a launch whose pointer list does not fit its length") {
    TraceBuilder builder;
    builder.record(
        0x02,
        Bytes().u64(1).u64(2).u64(3).u64(4).u64(5).text(std::string(24, '\0')).u16(2).u8(0).u64(9).data);
    CHECK(read_error(builder.finish())
              .find("record 0 (kernel_launch) at byte offset 40: payload length 75 does not "
                    "fit its type: a kernel_launch payload with 2 pointers is 83 bytes") !=
          std::string::npos);
  }
  SUBCASE("a launch shorter than its fixed fields") {
    TraceBuilder builder;
    builder.record(0x02, Bytes().u64(1).u16(0).data);
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 0 (kernel_launch) at byte offset 40: payload length 10 does not fit its "
          "type: a "
          "kernel_launch payload is at least 67 bytes");
  }
  SUBCASE("more pointers than a launch holds") {
    TraceBuilder builder;
    builder.record(0x02,
                   Bytes().u64(1).u64(2).u64(3).u64(4).u64(5).text(std::string(24, '\0')).u16(25).u8(0).data +
                       std::string(200, '\0'));
    CHECK(read_error(builder.finish()).find("pointer_count 25 is more than the 24 pointers a launch holds") !=
          std::string::npos);
  }
  SUBCASE("an unknown record type in a revision that has none") {
    TraceBuilder builder;
    builder.record(0x04, page_fault_payload(1));
    builder.record(0x40, "??");
    CHECK(read_error(builder.finish()) ==
          "damaged.trace: record 1 (unknown) at byte offset 82: unknown record type "
          "0x40; version 1.0 has no such type, so the file is corrupt");
  }
  SUBCASE("an enum value out of range") {
    TraceBuilder builder;
    builder.record(0x05, Bytes().u64(1).u64(2).u64(3).u64(4).u8(7).u8(0).data);
    CHECK(read_error(builder.finish())
              .find("record 0 (migration) at byte offset 40: direction 7 is not a migration "
                    "direction") != std::string::npos);
  }
  SUBCASE("a flipped bit") {
    std::string corrupt = good;
    const std::size_t at = good.size() - 30;  // inside the last record's byte count
    corrupt[at] = static_cast<char>(corrupt[at] ^ 0x10);
    const std::string error = read_error(corrupt);
    CHECK(error.find("damaged.trace: record 16 (end) at byte offset " + std::to_string(good.size() - 21) +
                     ": checksum mismatch: the end record says 0x") == 0);
    CHECK(error.find("the file is corrupt") != std::string::npos);
  }
  SUBCASE("a record count that does not match") {
    TraceBuilder builder;
    builder.record(0x04, page_fault_payload(1));
    CHECK(read_error(builder.finish(5)) ==
          "damaged.trace: record 1 (end) at byte offset 82: record count mismatch: "
          "the end record says 5 records, the file holds 1");
  }
  SUBCASE("bytes after the end record") {
    CHECK(read_error(good + "xyz") == "damaged.trace: byte offset " + std::to_string(good.size()) +
                                          ": 3 unexpected bytes after the end record");
  }
  SUBCASE("a file that does not exist") {
    const TraceReadResult result = read_trace("/nonexistent-deepum-dir/run.trace");
    CHECK(result.error == "/nonexistent-deepum-dir/run.trace: cannot open: No such file or directory");
  }
  SUBCASE("the file name is the path") {
    TempFile file("truncated");
    write_file(file.str(), good.substr(0, good.size() - 1));
    CHECK(read_trace(file.str())
              .error.find(file.str() + ": truncated: the file ends after 16 records at byte offset " +
                          std::to_string(good.size() - 1) + ", inside record 16 (end)") == 0);
  }
}

TEST_CASE("summarize counts records, functions, migrated bytes and faults") {
  const std::string bytes = Sample().bytes();
  const TraceReadResult result = read_trace_from_memory(bytes_of(bytes));
  REQUIRE_MESSAGE(result, result.error);
  const std::string summary = summarize(*result.trace);
  MESSAGE(summary);
  CHECK(summary.find("format 1.4") != std::string::npos);
  CHECK(summary.find("device_name: NVIDIA H100 80GB HBM3") != std::string::npos);
  CHECK(summary.find("3 kernel launches, 1 kernel executions, 0 memcpys, 0 memsets, 1 page fault groups, "
                     "2 migrations, 2 range events, 2 hints, 1 resident samples, 1 function names, 1 launch "
                     "operands, 1 copy launches, 1 buffer events") != std::string::npos);
  CHECK(summary.find("time span: 0.009000 s (timestamps 500 to 9000500 ns)") != std::string::npos);
  CHECK(summary.find("functions: 1 distinct launched, 1 named") != std::string::npos);
  CHECK(summary.find("migrated: 2.00 MiB host to device in 1 migrations, 4.00 KiB device to host in 1") !=
        std::string::npos);
  CHECK(summary.find("faults: 17 in 1 groups") != std::string::npos);
}

TEST_CASE("a 200k-launch trace reads back completely and quickly") {
  constexpr std::uint64_t kLaunches = 200'000;
  TempFile file("large");
  const auto t0 = std::chrono::steady_clock::now();
  {
    TraceWriter writer;
    REQUIRE(writer.open(file.str()));
    REQUIRE(writer.write_metadata({{"command_line", "synthetic"}}));
    for (std::uint64_t i = 0; i < kLaunches; ++i) {
      KernelLaunch launch = sample_launch(i, static_cast<std::uint16_t>(i % 8));
      launch.function = i % 64;
      if (i < 64) REQUIRE(writer.define_function(launch.function, "kernel_" + std::to_string(i)));
      REQUIRE(writer.write(launch));
      REQUIRE(writer.write(KernelExecution{i, launch.host_time + 5, launch.host_time + 9, 7, 0}));
    }
    REQUIRE(writer.finish());
  }
  const auto t1 = std::chrono::steady_clock::now();
  const TraceReadResult result = read_trace(file.str());
  const auto t2 = std::chrono::steady_clock::now();
  REQUIRE_MESSAGE(result, result.error);
  CHECK(result.trace->launches.size() == kLaunches);
  CHECK(result.trace->executions.size() == kLaunches);
  CHECK(result.trace->function_names.size() == 64);
  CHECK(result.trace->launches.back().correlation_id == kLaunches - 1);
  CHECK(result.trace->launches.back().pointer_count == (kLaunches - 1) % 8);

  TraceReader reader;
  REQUIRE(reader.open(file.str()));
  std::uint64_t launches = 0, pointers = 0;
  while (std::optional<TraceRecord> record = reader.next()) {
    if (const auto* launch = std::get_if<KernelLaunch>(&*record)) {
      ++launches;
      pointers += launch->pointer_count;
    }
  }
  const auto t3 = std::chrono::steady_clock::now();
  REQUIRE_MESSAGE(reader.finished(), reader.error());
  CHECK(launches == kLaunches);
  CHECK(pointers == kLaunches / 8 * 28);

  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  MESSAGE("200k launches + 200k executions, " << std::filesystem::file_size(file.path) / 1024
                                              << " KiB: write " << ms(t1 - t0) << " ms, read_trace "
                                              << ms(t2 - t1) << " ms, TraceReader " << ms(t3 - t2) << " ms");
  CHECK(ms(t3 - t2) < 10'000);  // generous for sanitizer builds; a release build takes well under a second
}
