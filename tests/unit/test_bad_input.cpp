// Bad input to the trace readers and the `deepum trace` commands: sizes and ranges a file claims
// past what any run holds, files that are not regular files, JSON numbers past a double's range.
// Each ends in one message naming the problem and a nonzero status, quickly and in bounded memory.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "deepum/core/input_file.hpp"
#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/residency_map.hpp"
#include "deepum/core/residency_replay.hpp"
#include "deepum/core/trace_commands.hpp"
#include "deepum/core/trace_file.hpp"
#include "temp_file.hpp"

using namespace deepum::core;

namespace {

constexpr std::uint64_t kBase = 0x7000'0000'0000ull;
constexpr std::uint64_t kTiB = std::uint64_t{1} << 40;

// A trace the project's writer makes, checksum and all, of whatever records `write` gives it.
template <typename Write>
std::string trace_bytes(Write&& write) {
  std::ostringstream bytes;
  TraceWriter writer;
  REQUIRE(writer.open(bytes, "bad.dtrace"));
  write(writer);
  REQUIRE(writer.finish());
  return bytes.str();
}

std::string read_error(const std::string& bytes) {
  const TraceReadResult result = read_trace_from_memory(std::as_bytes(std::span(bytes)), "bad.dtrace");
  CHECK_FALSE(result.trace.has_value());
  return result.error;
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A command's status, output and messages.
struct Outcome {
  int status = -1;
  std::string out, err;
};

Outcome run_trace(const std::vector<std::string>& args) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  REQUIRE(out != nullptr);
  REQUIRE(err != nullptr);
  Outcome outcome;
  outcome.status = run_trace_command(args, out, err);
  const auto text_of = [](std::FILE* file) {
    std::string text(static_cast<std::size_t>(std::ftell(file)), '\0');
    std::rewind(file);
    text.resize(std::fread(text.data(), 1, text.size(), file));
    std::fclose(file);
    return text;
  };
  outcome.out = text_of(out);
  outcome.err = text_of(err);
  return outcome;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A FIFO no one writes to: opening it for reading the ordinary way would wait for ever.
struct TempFifo {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("deepum-fifo." + std::to_string(getpid()));
  TempFifo() { REQUIRE(mkfifo(path.c_str(), 0600) == 0); }
  ~TempFifo() { std::filesystem::remove(path); }
};

}  // namespace

TEST_CASE("the trace reader refuses any range past the address space, naming the record and field") {
  const std::string limit =
      "passes 0x200000000000000, the end of any address space CUDA uses; the file is corrupt";
  SUBCASE("a managed range whose end wraps around") {
    const std::string error = read_error(trace_bytes([](TraceWriter& w) {
      w.write(RangeEvent{RangeEvent::Kind::allocated, 1, 0xffff'ffff'ffff'f000ull, std::uint64_t{1} << 20});
    }));
    CHECK(error ==
          "bad.dtrace: record 0 (range_event) at byte offset 24: address 0xfffffffffffff000 + "
          "1048576 bytes " +
              limit);
  }
  SUBCASE("a migration of every byte there is") {
    const std::string error = read_error(trace_bytes([](TraceWriter& w) {
      w.write(RangeEvent{RangeEvent::Kind::allocated, 1, kBase, kBlockBytes});
      w.write(Migration{2, 3, 0, UINT64_MAX, MigrationDirection::host_to_device, MigrationCause::user});
    }));
    CHECK(contains(
        error, "record 1 (migration) at byte offset 54: address 0x0 + 18446744073709551615 bytes " + limit));
  }
  SUBCASE("a hint, a buffer, a launch operand and a copy operand") {
    CHECK(contains(read_error(trace_bytes([](TraceWriter& w) {
                     w.write(Hint{Hint::Kind::evict_to_host, 1, kBase, kTraceAddressLimit});
                   })),
                   "record 0 (hint) at byte offset 24: address 0x700000000000 + 144115188075855872 bytes"));
    CHECK(contains(read_error(trace_bytes([](TraceWriter& w) {
                     w.write(BufferEvent{BufferEvent::Kind::handed_out, 1, kTraceAddressLimit, 1, 0});
                   })),
                   "record 0 (buffer_event) at byte offset 24: address 0x200000000000000 + 1 bytes"));
    CHECK(contains(read_error(trace_bytes([](TraceWriter& w) {
                     LaunchOperands operands;
                     operands.correlation_id = 5;
                     operands.pointers = {kBase, kBase + kBlockBytes};
                     operands.extents = {kBlockBytes, UINT64_MAX - kBase};
                     w.write(operands);
                   })),
                   "record 0 (launch_operands) at byte offset 24: operand 1 0x700000200000 + "));
    CHECK(contains(read_error(trace_bytes([](TraceWriter& w) {
                     CopyLaunch copy;
                     copy.correlation_id = 6;
                     copy.operation = GpuOperation::memcpy;
                     copy.operand_count = 2;
                     copy.operands = {kBase, 0xffff'0000'0000'0000ull};
                     copy.bytes = 4096;
                     w.write(copy);
                   })),
                   "record 0 (copy_launch) at byte offset 24: operand 1 0xffff000000000000 + 4096 bytes"));
  }
  SUBCASE("a range that ends exactly at the limit is fine") {
    const std::string bytes = trace_bytes([](TraceWriter& w) {
      w.write(RangeEvent{RangeEvent::Kind::allocated, 1, kTraceAddressLimit - kBlockBytes, kBlockBytes});
    });
    CHECK(read_trace_from_memory(std::as_bytes(std::span(bytes))).trace.has_value());
  }
}

TEST_CASE("input files must be regular files: a FIFO, a directory or a device is refused at once") {
  std::uint64_t size = 0;
  std::string error;
  TempFifo fifo;
  CHECK(open_regular_file(fifo.path.string(), size, error) == nullptr);
  CHECK(error == fifo.path.string() + ": not a regular file (a FIFO)");
  CHECK_FALSE(read_regular_file("/dev/zero", 1 << 20, error).has_value());
  CHECK(error == "/dev/zero: not a regular file (a character device)");
  const std::string directory = std::filesystem::temp_directory_path().string();
  CHECK_FALSE(read_regular_file(directory, 1 << 20, error).has_value());
  CHECK(error == directory + ": not a regular file (a directory)");

  TraceReader reader;
  CHECK_FALSE(reader.open(fifo.path.string()));
  CHECK(reader.error() == fifo.path.string() + ": not a regular file (a FIFO)");
  CHECK_FALSE(reader.next().has_value());

  TempFile big("deepum-big-json");
  write_file(big.path, std::string(4096, ' '));
  CHECK_FALSE(read_regular_file(big.str(), 1000, error).has_value());
  CHECK(error == big.str() + ": 4.00 KiB is larger than the 1000 B this reader accepts");
  const std::optional<std::string> text = read_regular_file(big.str(), 4096, error);
  REQUIRE(text.has_value());
  CHECK(text->size() == 4096);
}

TEST_CASE("a replay refuses ranges covering more than it holds, before allocating for them") {
  Trace trace;
  trace.ranges.push_back({RangeEvent::Kind::allocated, 1, kBase, 32 * kTiB});
  const auto start = std::chrono::steady_clock::now();
  ResidencyReplay replay = replay_residency(trace, kTiB);
  CHECK(replay.error ==
        "its managed ranges cover 32.00 TiB of address space (in 2 MB blocks, each counted once), more than "
        "the 16.00 TiB a replay holds");
  CHECK(replay.migrations == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));

  // Blocks count once however often they are allocated again; many ranges add up.
  trace.ranges.clear();
  for (int i = 0; i < 100; ++i) {
    trace.ranges.push_back({RangeEvent::Kind::allocated, 1, kBase, 8 * kBlockBytes});
    trace.ranges.push_back({RangeEvent::Kind::freed, 2, kBase, 8 * kBlockBytes});
  }
  CHECK(replay_residency(trace, kTiB, nullptr, 0, 8 * kBlockBytes).error.empty());
  trace.ranges.push_back({RangeEvent::Kind::allocated, 3, kBase + 7 * kBlockBytes, 2 * kBlockBytes});
  CHECK(replay_residency(trace, kTiB, nullptr, 0, 8 * kBlockBytes).error ==
        "its managed ranges cover 18.00 MiB of address space (in 2 MB blocks, each counted once), more than "
        "the 16.00 MiB a replay holds");
}

TEST_CASE("a migration or eviction claiming the whole address space costs what the map holds") {
  ResidencyMap map(/*faults_make_resident=*/false);
  map.on_range_allocated(kBase, 4 * kBlockBytes);
  const auto start = std::chrono::steady_clock::now();
  map.on_migration(
      Migration{10, 20, 0, kTraceAddressLimit, MigrationDirection::host_to_device, MigrationCause::user});
  CHECK(map.resident_bytes() == 4 * kBlockBytes);
  map.on_evicted({0, UINT64_MAX}, 30);  // past the end too: taken as up to the top
  CHECK(map.resident_bytes() == 0);
  map.on_migration(Migration{40, 50, kBase + kBlockBytes, kTraceAddressLimit - kBase - kBlockBytes,
                             MigrationDirection::host_to_device, MigrationCause::user});
  CHECK(map.resident_bytes() == 3 * kBlockBytes);
  map.on_range_freed(kBase, kTraceAddressLimit - kBase);
  CHECK(map.resident_bytes() == 0);
  CHECK(map.tracked_blocks() == 0);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
}

TEST_CASE("validate_perfetto_json reports a number past a double's range instead of throwing") {
  const std::string error =
      validate_perfetto_json(R"({"traceEvents":[{"name":"x","ph":"i","ts":1E400,"pid":1,"tid":1}]})");
  CHECK(error == "not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1E400'");
  CHECK(contains(validate_perfetto_json(R"({"traceEvents":[{"name":"x","ph":"i","ts":-1e999}]})"),
                 "number overflow parsing '-1e999'"));
}

TEST_CASE("deepum trace commands: bad input ends in one message naming it and status 2") {
  TempFile good("deepum-good");
  write_file(good.path, trace_bytes([](TraceWriter& w) {
               w.write(RangeEvent{RangeEvent::Kind::allocated, 100, kBase, 4 * kBlockBytes});
               w.write(Migration{200, 300, kBase, kBlockBytes, MigrationDirection::host_to_device,
                                 MigrationCause::user});
             }));
  SUBCASE("a good trace") {
    const Outcome summary = run_trace({"summary", good.str()});
    CHECK(summary.status == 0);
    CHECK(contains(summary.out, good.str() + ": valid\n"));
    const Outcome residency = run_trace({"residency", good.str(), "1GiB", "--timeline", "1"});
    CHECK(residency.status == 0);
    CHECK(contains(residency.out, "peak resident: 2.00 MiB"));
    CHECK(residency.err.empty());
  }
  SUBCASE("a missing file, a FIFO, a damaged trace") {
    Outcome missing = run_trace({"summary", "/nonexistent/run.dtrace"});
    CHECK(missing.status == kTraceCommandBadInput);
    CHECK(missing.err == "/nonexistent/run.dtrace: cannot open: No such file or directory\n");
    TempFifo fifo;
    const Outcome blocked = run_trace({"residency", fifo.path.string(), "1GiB"});
    CHECK(blocked.status == kTraceCommandBadInput);
    CHECK(blocked.err == fifo.path.string() + ": not a regular file (a FIFO)\n");
    TempFile damaged("deepum-damaged");
    write_file(damaged.path, "DEEPUMTR but not much else");
    const Outcome read = run_trace({"convert", damaged.str(), damaged.str() + ".json"});
    CHECK(read.status == kTraceCommandBadInput);
    CHECK(contains(read.err, damaged.str() + ": byte offset 8: unsupported trace version"));
  }
  SUBCASE("ranges claiming more than a replay holds") {
    TempFile huge("deepum-huge");
    write_file(huge.path, trace_bytes([](TraceWriter& w) {
                 w.write(RangeEvent{RangeEvent::Kind::allocated, 100, 0, std::uint64_t{1} << 56});
                 w.write(Migration{200, 300, 0, kBlockBytes, MigrationDirection::host_to_device,
                                   MigrationCause::user});
               }));
    const Outcome refused = run_trace({"residency", huge.str(), "1GiB"});
    CHECK(refused.status == kTraceCommandBadInput);
    CHECK(refused.err == huge.str() +
                             ": its managed ranges cover 64.00 PiB of address space (in 2 MB blocks, each "
                             "counted once), more than the 16.00 TiB a replay holds\n");
    CHECK(refused.out.empty());
  }
  SUBCASE("trace check: the Perfetto JSON is a FIFO, or holds 1E400") {
    const std::string prefix = good.str() + ".check";
    std::filesystem::copy_file(good.path, prefix + ".dtrace");
    {
      TempFifo fifo;
      std::filesystem::rename(fifo.path, prefix + ".perfetto.json");
      const Outcome blocked = run_trace({"check", prefix});
      CHECK(blocked.status == kTraceCommandBadInput);
      CHECK(blocked.err == prefix + ".perfetto.json: not a regular file (a FIFO)\n");
      std::filesystem::remove(prefix + ".perfetto.json");
    }
    write_file(prefix + ".perfetto.json", R"({"traceEvents":[{"ts":1E400}]})");
    const Outcome overflow = run_trace({"check", prefix});
    CHECK(overflow.status == kTraceCommandBadInput);
    CHECK(overflow.err == prefix +
                              ".perfetto.json: not valid JSON: [json.exception.out_of_range.406] number "
                              "overflow parsing '1E400'\n");
    std::filesystem::remove(prefix + ".dtrace");
    std::filesystem::remove(prefix + ".perfetto.json");
  }
  SUBCASE("usage and arguments") {
    CHECK(run_trace({"residency", good.str(), "50%"}).err ==
          "deepum: trace residency: LIMIT 50%: a percentage needs the GPU's size; give bytes or a size such "
          "as 3.75GiB\n");
    CHECK(run_trace({"residency", good.str(), "1GiB", "--timeline", "0"}).status == kTraceCommandBadInput);
    CHECK(run_trace({"frobnicate"}).status == kTraceCommandBadInput);
  }
  SUBCASE("an output that cannot be written is a failure, not bad input") {
    const Outcome write = run_trace({"convert", good.str(), "/nonexistent/out.json"});
    CHECK(write.status == kTraceCommandFailed);
    CHECK(contains(write.err, "cannot open /nonexistent/out.json for writing: No such file or directory"));
  }
}
