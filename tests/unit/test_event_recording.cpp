// What reaches the trace files: the pipeline handing the records only the simulator needs (launch
// operands, copies, buffer events) to its recorder, and TraceRecorder writing them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "deepum/core/event_pipeline.hpp"
#include "deepum/core/trace_recorder.hpp"

using namespace deepum::core;

namespace {

// An EventRecorder that keeps what it is handed.
struct RecordingRecorder final : EventRecorder {
  std::vector<KernelLaunch> launches;
  std::vector<KernelExecution> executions;
  std::vector<Hint> hints;
  std::vector<LaunchOperands> operands;
  std::vector<CopyLaunch> copies;
  std::vector<BufferEvent> buffers;
  std::size_t other_calls = 0;  // function names, faults, migrations, ranges, resident samples

  void function_name(std::uint64_t, std::string_view) override { ++other_calls; }
  void launch(const KernelLaunch& l) override { launches.push_back(l); }
  void execution(const KernelExecution& e) override { executions.push_back(e); }
  void fault(const PageFault&) override { ++other_calls; }
  void migration(const Migration&) override { ++other_calls; }
  void range(const RangeEvent&) override { ++other_calls; }
  void hint(const Hint& h) override { hints.push_back(h); }
  void resident(const ResidentSample&) override { ++other_calls; }
  void launch_operands(const LaunchOperands& o) override { operands.push_back(o); }
  void copy_launch(const CopyLaunch& c) override { copies.push_back(c); }
  void buffer_event(const BufferEvent& b) override { buffers.push_back(b); }
};

constexpr std::uint64_t kBase = 0x7f0000000000;  // 2 MB aligned

}  // namespace

TEST_CASE(
    "the pipeline hands launch operands, copies and buffer events to the recorder and changes nothing else") {
  EventPipeline pipeline(PipelineOptions{});
  RecordingRecorder recorder;

  pipeline.on_launch_operands(
      LaunchOperands{41, false, true, {kBase, kBase + kBlockBytes}, {kBlockBytes, 4096}});
  pipeline.on_copy_launch(CopyLaunch{42, 0x5555, 1'000, GpuOperation::memcpy, 1, {kBase, 0}, 65536, false});
  pipeline.on_buffer_event(BufferEvent{BufferEvent::Kind::handed_out, 1'100, kBase, 3 * kBlockBytes, 0});
  pipeline.on_buffer_event(BufferEvent{BufferEvent::Kind::returned, 1'200, kBase, 3 * kBlockBytes, 0x5555});
  pipeline.on_hint(Hint{Hint::Kind::discard, 1'300, kBase, kBlockBytes});  // an ordinary event among them
  pipeline.step(10'000, &recorder);

  REQUIRE(recorder.operands.size() == 1);
  CHECK(recorder.operands[0].correlation_id == 41);
  CHECK_FALSE(recorder.operands[0].complete);
  CHECK(recorder.operands[0].unnamed_memory);
  CHECK(recorder.operands[0].pointers == std::vector<std::uint64_t>{kBase, kBase + kBlockBytes});
  CHECK(recorder.operands[0].extents == std::vector<std::uint64_t>{kBlockBytes, 4096});
  REQUIRE(recorder.copies.size() == 1);
  CHECK(recorder.copies[0].correlation_id == 42);
  CHECK(recorder.copies[0].stream == 0x5555);
  CHECK(recorder.copies[0].operands[0] == kBase);
  CHECK(recorder.copies[0].bytes == 65536);
  REQUIRE(recorder.buffers.size() == 2);
  CHECK(recorder.buffers[0].kind == BufferEvent::Kind::handed_out);
  CHECK(recorder.buffers[1].kind == BufferEvent::Kind::returned);
  CHECK(recorder.buffers[1].time == 1'200);
  CHECK(recorder.buffers[1].stream == 0x5555);
  CHECK(recorder.hints.size() == 1);
  CHECK(recorder.launches.empty());
  CHECK(recorder.executions.empty());

  CHECK(recorder.other_calls == 0);  // no resident sample yet: the first comes 10 ms in

  // They are records for the file only: no launch counted, nothing made resident.
  const PipelineStats stats = pipeline.stats();
  CHECK(stats.launches == 0);
  CHECK(stats.executions == 0);
  CHECK(stats.peak_estimated_resident_bytes == 0);
  CHECK(stats.launch_evicted_bytes == 0);  // the hint was a discard

  // Each goes to the recorder once; without a recorder they are dropped.
  pipeline.on_copy_launch(CopyLaunch{43, 0, 2'000, GpuOperation::memset, 1, {kBase, 0}, 8, false});
  pipeline.step(20'000, nullptr);
  pipeline.step(30'000, &recorder);
  CHECK(recorder.copies.size() == 1);
  CHECK(recorder.operands.size() == 1);
  CHECK(recorder.buffers.size() == 2);
}

TEST_CASE("TraceRecorder writes launch operands, copies and buffer events to the compact trace") {
  const std::filesystem::path prefix =
      std::filesystem::temp_directory_path() / ("deepum-recorder." + std::to_string(getpid()));
  const std::string compact = prefix.string() + ".dtrace", perfetto = prefix.string() + ".perfetto.json";
  {
    TraceRecorder recorder;
    REQUIRE(recorder.open(prefix.string(), {{"command_line", "test"}}).empty());
    recorder.launch_operands(LaunchOperands{7, true, false, {kBase}, {kBlockBytes}});
    recorder.copy_launch(
        CopyLaunch{8, 0, 1'000, GpuOperation::memcpy, 2, {kBase, kBase + kBlockBytes}, 64, false});
    recorder.buffer_event(BufferEvent{BufferEvent::Kind::returned, 1'100, kBase, kBlockBytes, 0x77});
    REQUIRE(recorder.finish().empty());
  }
  const TraceReadResult result = read_trace(compact);
  std::ifstream in(perfetto);
  const std::string json_text{std::istreambuf_iterator<char>(in), {}};
  std::filesystem::remove(compact);
  std::filesystem::remove(perfetto);
  REQUIRE_MESSAGE(result, result.error);
  REQUIRE(result.trace->launch_operands.size() == 1);
  CHECK(result.trace->launch_operands[0].correlation_id == 7);
  CHECK(result.trace->launch_operands[0].pointers == std::vector<std::uint64_t>{kBase});
  REQUIRE(result.trace->copies.size() == 1);
  CHECK(result.trace->copies[0].operand_count == 2);
  REQUIRE(result.trace->buffer_events.size() == 1);
  CHECK(result.trace->buffer_events[0].stream == 0x77);

  // The JSON draws the buffer event; launches and copies are drawn from their own records.
  CHECK(validate_perfetto_json(json_text).empty());
  const nlohmann::json document = nlohmann::json::parse(json_text);
  std::size_t buffer_events = 0;
  for (const nlohmann::json& event : document["traceEvents"]) {
    if (event["ph"] == "i" && event["name"] == "buffer returned") ++buffer_events;
  }
  CHECK(buffer_events == 1);
}
