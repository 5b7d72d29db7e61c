// The Perfetto/Chrome JSON writer, the compact-trace converter and the structure validator.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "deepum/core/perfetto_writer.hpp"

using namespace deepum::core;
using nlohmann::json;

namespace {

constexpr std::string_view kAwkwardName =
    R"(void at::native::(anonymous namespace)::kernel<float, "x\y">(int))";

// Events of one phase whose name matches, in document order.
std::vector<json> events_named(const json& document, std::string_view phase, std::string_view name) {
  std::vector<json> found;
  for (const json& event : document["traceEvents"]) {
    if (event["ph"] == phase && event["name"] == name) found.push_back(event);
  }
  return found;
}

// The trace converted by write_perfetto_json() through a file, checked against the format and parsed.
json converted(const Trace& trace, const std::string& file_name) {
  const auto path = std::filesystem::temp_directory_path() / (file_name + std::to_string(getpid()) + ".json");
  std::string error;
  REQUIRE_MESSAGE(write_perfetto_json(trace, path.string(), &error), error);
  std::ifstream in(path);
  const std::string text{std::istreambuf_iterator<char>(in), {}};
  std::filesystem::remove(path);
  const std::string problem = validate_perfetto_json(text);
  CHECK_MESSAGE(problem.empty(), problem);
  return json::parse(text);
}

std::string thread_name(const json& document, int pid, int tid) {
  for (const json& event : document["traceEvents"]) {
    if (event["ph"] == "M" && event["name"] == "thread_name" && event["pid"] == pid &&
        event.value("tid", -1) == tid) {
      return event["args"]["name"];
    }
  }
  return {};
}

// A small run: one launch and its execution, one without a launch, faults, migrations both ways,
// hints, ranges and resident samples.
std::string small_run() {
  std::ostringstream out;
  PerfettoJsonWriter writer;
  REQUIRE(writer.open(out, "small", Timestamp{1'000'000}));
  REQUIRE(writer.set_metadata({{"device_name", "NVIDIA H100"}, {"command_line", "python \"train.py\""}}));
  REQUIRE(writer.define_function(0x42, kAwkwardName));
  KernelLaunch launch;
  launch.correlation_id = 5;
  launch.execution_key = 0xabcdef0123456789ull;
  launch.function = 0x42;
  launch.host_time = 1'000'000;
  launch.grid = {80, 2, 1};
  launch.block = {128, 1, 1};
  launch.pointer_count = 3;
  REQUIRE(
      writer.write(RangeEvent{RangeEvent::Kind::allocated, 1'000'100, 0x7000'0000'0000ull, 8 * kBlockBytes}));
  REQUIRE(writer.write(launch));
  REQUIRE(writer.write(Hint{Hint::Kind::prefetch_to_gpu, 1'000'500, 0x7000'0000'0000ull, 2 * kBlockBytes}));
  REQUIRE(writer.write(KernelExecution{5, 1'002'000, 1'003'500, 7, 0}));
  REQUIRE(writer.write(KernelExecution{6, 1'004'000, 1'004'250, 9, 0}));
  REQUIRE(writer.write(PageFault{1'002'100, 1'002'200, 0x7000'0020'1000ull, 4, FaultAccess::read, 0}));
  REQUIRE(writer.write(Migration{1'002'300, 1'002'700, 0x7000'0020'0000ull, kBlockBytes,
                                 MigrationDirection::host_to_device, MigrationCause::coherence}));
  REQUIRE(writer.write(Migration{1'003'000, 1'003'100, 0x7000'0040'0000ull, 65536,
                                 MigrationDirection::device_to_host, MigrationCause::eviction}));
  REQUIRE(writer.write(ResidentSample{1'003'000, 3 * kBlockBytes, 0}));
  REQUIRE(writer.write(ResidentSample{1'004'000, 4 * kBlockBytes, 5 * kBlockBytes}));
  REQUIRE(writer.write(Hint{Hint::Kind::evict_to_host, 1'005'000, 0x7000'0040'0000ull, kBlockBytes}));
  REQUIRE(writer.finish());
  return out.str();
}

}  // namespace

TEST_CASE("deepum's own copy kernel, run before the launch it came within, leaves that launch its name") {
  std::ostringstream out;
  PerfettoJsonWriter writer;
  REQUIRE(writer.open(out, "own", Timestamp{1'000'000}));
  REQUIRE(writer.define_function(0x42, "update"));
  KernelLaunch launch;
  launch.correlation_id = 5;
  launch.function = 0x42;
  launch.host_time = 1'000'000;
  REQUIRE(writer.write(launch));
  // As the decoder hands it over: no correlation id.
  REQUIRE(writer.write(KernelExecution{kOwnKernelCorrelation, 1'001'000, 1'001'500, 11, 0}));
  REQUIRE(writer.write(KernelExecution{5, 1'002'000, 1'003'000, 7, 0}));
  REQUIRE(writer.finish());
  const json document = json::parse(out.str());
  const std::vector<json> program = events_named(document, "X", "update");
  REQUIRE(program.size() == 1);
  CHECK(thread_name(document, 1, program[0]["tid"]) == "stream 7");
  const std::vector<json> own = events_named(document, "X", kOwnCopyKernelName);
  REQUIRE(own.size() == 1);
  CHECK(thread_name(document, 1, own[0]["tid"]) == "stream 11");
  CHECK(own[0]["args"]["correlation_id"] == 0);
}

TEST_CASE("the Perfetto writer produces valid JSON with deepum's tracks") {
  const std::string text = small_run();
  const std::string problem = validate_perfetto_json(text);
  CHECK_MESSAGE(problem.empty(), problem);
  const json document = json::parse(text);
  CHECK(document["displayTimeUnit"] == "ns");
  CHECK(document["metadata"]["device_name"] == "NVIDIA H100");
  CHECK(document["metadata"]["command_line"] == "python \"train.py\"");
  CHECK(document["metadata"]["deepum_base_timestamp_ns"] == "1000000");

  CHECK(events_named(document, "M", "process_name").size() == 2);
  CHECK(thread_name(document, 1, 1) == "page faults");
  CHECK(thread_name(document, 1, 2) == "H2D migrations");
  CHECK(thread_name(document, 1, 3) == "D2H migrations");
  CHECK(thread_name(document, 2, 1) == "host launches");
  CHECK(thread_name(document, 2, 2) == "hints");
  CHECK(thread_name(document, 2, 3) == "managed ranges");

  const std::vector<json> kernels = events_named(document, "X", kAwkwardName);
  REQUIRE(kernels.size() == 1);
  const json& kernel = kernels[0];
  CHECK(kernel["pid"] == 1);
  CHECK(thread_name(document, 1, kernel["tid"]) == "stream 7");
  CHECK(kernel["ts"].get<double>() == doctest::Approx(2.0));  // µs after the base
  CHECK(kernel["dur"].get<double>() == doctest::Approx(1.5));
  CHECK(kernel["args"]["correlation_id"] == 5);
  CHECK(kernel["args"]["execution_key"] == "0xabcdef0123456789");
  CHECK(kernel["args"]["grid"] == json::array({80, 2, 1}));
  CHECK(kernel["args"]["block"] == json::array({128, 1, 1}));
  CHECK(kernel["args"]["managed_pointers"] == 3);

  const std::vector<json> orphans = events_named(document, "X", "kernel (correlation 6)");
  REQUIRE(orphans.size() == 1);
  CHECK(thread_name(document, 1, orphans[0]["tid"]) == "stream 9");

  const std::vector<json> launches = events_named(document, "i", kAwkwardName);
  REQUIRE(launches.size() == 1);
  CHECK(launches[0]["pid"] == 2);
  CHECK(launches[0]["tid"] == 1);
  CHECK(launches[0]["ts"].get<double>() == 0.0);
  CHECK(launches[0]["args"]["function"] == kAwkwardName);
  CHECK(launches[0]["args"]["correlation_id"] == 5);

  const std::vector<json> faults = events_named(document, "i", "page fault");
  REQUIRE(faults.size() == 1);
  CHECK(faults[0]["s"] == "t");
  CHECK(faults[0]["tid"] == 1);
  CHECK(faults[0]["args"] == json{{"address", "0x700000201000"}, {"count", 4}, {"access", "read"}});

  const std::vector<json> h2d = events_named(document, "X", "H2D coherence");
  REQUIRE(h2d.size() == 1);
  CHECK(h2d[0]["tid"] == 2);
  CHECK(h2d[0]["dur"].get<double>() == doctest::Approx(0.4));
  CHECK(h2d[0]["args"] ==
        json{{"bytes", kBlockBytes}, {"cause", "coherence"}, {"address", "0x700000200000"}});
  const std::vector<json> d2h = events_named(document, "X", "D2H eviction");
  REQUIRE(d2h.size() == 1);
  CHECK(d2h[0]["tid"] == 3);

  const std::vector<json> hints = events_named(document, "i", "prefetch to GPU");
  REQUIRE(hints.size() == 1);
  CHECK(hints[0]["tid"] == 2);
  CHECK(hints[0]["args"] == json{{"address", "0x700000000000"}, {"bytes", 2 * kBlockBytes}});
  CHECK(events_named(document, "i", "evict to host").size() == 1);
  CHECK(events_named(document, "i", "allocate").size() == 1);

  const std::vector<json> resident = events_named(document, "C", "resident bytes");
  REQUIRE(resident.size() == 2);
  CHECK(resident[0]["pid"] == 2);
  CHECK(resident[0]["args"] == json{{"estimated", 3 * kBlockBytes}});  // measured unknown: no sample
  CHECK(resident[1]["args"] == json{{"estimated", 4 * kBlockBytes}, {"measured", 5 * kBlockBytes}});
}

TEST_CASE("copies and memsets are drawn on their stream's track, named by kind and size") {
  std::ostringstream out;
  PerfettoJsonWriter writer;
  REQUIRE(writer.open(out, "copies", Timestamp{1'000'000}));
  // A launch pending with the copy's correlation id: a copy is never matched to a launch, so the
  // launch stays for its own kernel.
  REQUIRE(writer.define_function(0x77, "gemm"));
  KernelLaunch launch;
  launch.correlation_id = 21;
  launch.function = 0x77;
  launch.host_time = 1'000'000;
  REQUIRE(writer.write(launch));
  REQUIRE(writer.write(
      KernelExecution{21, 1'001'000, 1'003'000, 7, 0, GpuOperation::memcpy, 1, std::uint64_t{4} << 20}));
  REQUIRE(writer.write(
      KernelExecution{22, 1'004'000, 1'004'500, 7, 0, GpuOperation::memset, 0, std::uint64_t{1} << 20}));
  REQUIRE(writer.write(KernelExecution{23, 1'005'000, 1'005'100, 8, 1, GpuOperation::memcpy, 2, 512}));
  REQUIRE(writer.write(KernelExecution{24, 1'006'000, 1'006'100, 8, 1, GpuOperation::memcpy, 200, 2048}));
  REQUIRE(writer.write(KernelExecution{21, 1'007'000, 1'008'000, 7, 0}));  // the launch's kernel
  REQUIRE(writer.finish());
  const std::string text = out.str();
  const std::string problem = validate_perfetto_json(text);
  CHECK_MESSAGE(problem.empty(), problem);
  const json document = json::parse(text);

  const std::vector<json> h2d = events_named(document, "X", "memcpy HtoD 4.00 MiB");
  REQUIRE(h2d.size() == 1);
  CHECK(h2d[0]["pid"] == 1);
  CHECK(thread_name(document, 1, h2d[0]["tid"]) == "stream 7");
  CHECK(h2d[0]["ts"].get<double>() == doctest::Approx(1.0));
  CHECK(h2d[0]["dur"].get<double>() == doctest::Approx(2.0));
  CHECK(h2d[0]["args"] ==
        json{{"kind", "HtoD"}, {"bytes", std::uint64_t{4} << 20}, {"correlation_id", 21}, {"device", 0}});

  const std::vector<json> memset = events_named(document, "X", "memset 1.00 MiB");
  REQUIRE(memset.size() == 1);
  CHECK(memset[0]["tid"] == h2d[0]["tid"]);
  CHECK(memset[0]["args"]["kind"] == "memset");
  CHECK(memset[0]["args"]["bytes"] == std::uint64_t{1} << 20);

  const std::vector<json> d2h = events_named(document, "X", "memcpy DtoH 512 B");
  REQUIRE(d2h.size() == 1);
  CHECK(thread_name(document, 1, d2h[0]["tid"]) == "stream 8");
  CHECK(d2h[0]["args"]["device"] == 1);
  const std::vector<json> odd = events_named(document, "X", "memcpy unknown 2.00 KiB");
  REQUIRE(odd.size() == 1);
  CHECK(odd[0]["args"]["kind"] == "unknown");

  const std::vector<json> kernels = events_named(document, "X", "gemm");
  REQUIRE(kernels.size() == 1);
  CHECK(kernels[0]["args"]["grid"] == json::array({0, 0, 0}));  // from the launch
}

TEST_CASE("names are escaped so any bytes give valid JSON") {
  const std::string control = std::string("tab\there, newline\nthere, bell\a, nul") + '\0' + "end";
  const std::string invalid_utf8 = "bad \xff\xc3 and overlong \xc0\xaf and surrogate \xed\xa0\x80 end";
  const std::string valid_utf8 = "µs → 測定 🚀";
  std::ostringstream out;
  PerfettoJsonWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.define_function(1, kAwkwardName));
  REQUIRE(writer.define_function(2, control));
  REQUIRE(writer.define_function(3, invalid_utf8));
  REQUIRE(writer.define_function(4, valid_utf8));
  for (std::uint64_t f = 1; f <= 4; ++f) {
    KernelLaunch launch;
    launch.correlation_id = f;
    launch.function = f;
    REQUIRE(writer.write(launch));
  }
  REQUIRE(writer.finish());
  const std::string text = out.str();
  CHECK(text.find(R"(kernel<float, \"x\\y\">(int))") != std::string::npos);
  const std::string problem = validate_perfetto_json(text);
  CHECK_MESSAGE(problem.empty(), problem);
  const json document = json::parse(text);
  CHECK(events_named(document, "i", kAwkwardName).size() == 1);
  CHECK(events_named(document, "i", control).size() == 1);
  CHECK(events_named(document, "i", valid_utf8).size() == 1);
  CHECK(events_named(document, "i",
                     "bad \xef\xbf\xbd\xef\xbf\xbd and overlong \xef\xbf\xbd\xef\xbf\xbd and "
                     "surrogate \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end")
            .size() == 1);
}

TEST_CASE("without a base timestamp the first event is time 0 and earlier ones are negative") {
  std::ostringstream out;
  PerfettoJsonWriter writer;
  REQUIRE(writer.open(out));
  REQUIRE(writer.write(Hint{Hint::Kind::discard, 5'000'000'000'123ull, 0, 0}));
  REQUIRE(writer.write(Hint{Hint::Kind::discard, 4'999'999'998'000ull, 0, 0}));
  REQUIRE(writer.finish());
  const json document = json::parse(out.str());
  const std::vector<json> hints = events_named(document, "i", "discard");
  REQUIRE(hints.size() == 2);
  CHECK(hints[0]["ts"].get<double>() == 0.0);
  CHECK(hints[1]["ts"].get<double>() == doctest::Approx(-2.123));
  CHECK(out.str().find("\"ts\":-2.123,") != std::string::npos);  // exact, not through a double
  CHECK(document["metadata"]["deepum_base_timestamp_ns"] == "5000000000123");
}

TEST_CASE("an empty document is valid and a failed open says why") {
  std::ostringstream out;
  {
    PerfettoJsonWriter writer;
    REQUIRE(writer.open(out));
  }  // the destructor finishes it
  CHECK(validate_perfetto_json(out.str()).empty());
  CHECK(json::parse(out.str())["metadata"].empty());

  PerfettoJsonWriter writer;
  CHECK_FALSE(writer.open("/nonexistent-deepum-dir/run.json"));
  CHECK(writer.error().find("cannot open /nonexistent-deepum-dir/run.json for writing") == 0);
  CHECK_FALSE(writer.write(Hint{}));
}

TEST_CASE("write_perfetto_json converts a compact trace in time order") {
  Trace trace;
  trace.header.metadata = {{"device_name", "test GPU"}};
  trace.function_names = {{10, "gemm"}, {11, "relu"}};
  for (std::uint64_t i = 0; i < 100; ++i) {
    KernelLaunch launch;
    launch.correlation_id = i;
    launch.function = 10 + i % 2;
    launch.host_time = 50'000 + i * 1000;
    trace.launches.push_back(launch);
    // executions arrive in activity-buffer order, not time order
    trace.executions.push_back({99 - i, 50'000 + (99 - i) * 1000 + 400, 50'000 + (99 - i) * 1000 + 900,
                                static_cast<std::uint32_t>(i % 3), 0});
  }
  trace.faults.push_back({60'000, 60'100, 0x1000, 2, FaultAccess::write, 0});
  trace.migrations.push_back(
      {60'200, 60'300, 0x0, kBlockBytes, MigrationDirection::host_to_device, MigrationCause::prefetch});
  trace.ranges.push_back({RangeEvent::Kind::allocated, 40'000, 0x0, kBlockBytes});
  trace.hints.push_back({Hint::Kind::prefetch_to_gpu, 55'000, 0x0, kBlockBytes});
  trace.resident_samples.push_back({70'000, kBlockBytes, 0});

  const json document = converted(trace, "deepum-convert.");
  CHECK(document["metadata"]["device_name"] == "test GPU");
  CHECK(document["metadata"]["deepum_base_timestamp_ns"] == "40000");
  CHECK(events_named(document, "X", "gemm").size() == 50);
  CHECK(events_named(document, "X", "relu").size() == 50);
  CHECK(events_named(document, "i", "gemm").size() == 50);
  CHECK(events_named(document, "i", "allocate")[0]["ts"].get<double>() == 0.0);
  double previous = -1;
  std::size_t timed = 0;
  for (const json& event : document["traceEvents"]) {
    if (event["ph"] == "M") continue;
    CHECK(event["ts"].get<double>() >= previous);
    previous = event["ts"].get<double>();
    ++timed;
  }
  CHECK(timed == 205);

  std::string error;
  CHECK_FALSE(write_perfetto_json(trace, "/nonexistent-deepum-dir/x.json", &error));
  CHECK(error.find("cannot open") == 0);
}

TEST_CASE("validate_perfetto_json rejects malformed documents") {
  const json good = json::parse(small_run());
  REQUIRE(validate_perfetto_json(good.dump()).empty());
  const auto with = [&](auto&& change) {
    json document = good;
    change(document);
    return validate_perfetto_json(document.dump());
  };
  const auto kernel_index = [&] {
    const json& events = good["traceEvents"];
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i]["ph"] == "X") return i;
    }
    FAIL("no X event");
    return std::size_t{0};
  }();
  const std::string at = "traceEvents[" + std::to_string(kernel_index) + "] ";

  CHECK(validate_perfetto_json("{\"traceEvents\":[").find("not valid JSON") == 0);
  CHECK(validate_perfetto_json("[]") == "the document is not a JSON object");
  CHECK(validate_perfetto_json("{\"events\":[]}") == "no \"traceEvents\" array");
  CHECK(with([](json& d) { d["displayTimeUnit"] = "s"; }) ==
        "\"displayTimeUnit\" is neither \"ns\" nor \"ms\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index] = 3; }) == at + "is not an object");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index].erase("name"); }) ==
        at + "has no string \"name\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index].erase("ph"); }) == at + "has no string \"ph\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index]["ph"] = "Q"; }) ==
        at + "has an unknown phase \"Q\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index]["ts"] = "soon"; }) ==
        at + "has no numeric \"ts\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index].erase("pid"); }) == at + "has no integer \"pid\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index].erase("tid"); }) ==
        at + "(a \"X\" event) has no integer \"tid\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index]["dur"] = -1; }) ==
        at + "is an \"X\" event without a non-negative \"dur\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index].erase("dur"); }) ==
        at + "is an \"X\" event without a non-negative \"dur\"");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index]["tid"] = 77; }) ==
        "thread 77 of process 1 has events but no thread_name");
  CHECK(with([&](json& d) { d["traceEvents"][kernel_index]["pid"] = 5; }) ==
        "process 5 has events but no process_name");
  CHECK(with([](json& d) {
          d["traceEvents"].push_back(
              {{"name", "c"}, {"ph", "C"}, {"ts", 1}, {"pid", 2}, {"args", {{"x", "1"}}}});
        }).find("is a counter whose series \"x\" is not a number") != std::string::npos);
  CHECK(with([](json& d) {
          d["traceEvents"].push_back(
              {{"name", "i"}, {"ph", "i"}, {"s", "x"}, {"ts", 1}, {"pid", 2}, {"tid", 1}});
        }).find("has a scope \"s\" that is not g, p or t") != std::string::npos);
  CHECK(
      with([](json& d) {
        d["traceEvents"].push_back({{"name", "thread_name"}, {"ph", "M"}, {"ts", 0}, {"pid", 2}, {"tid", 9}});
      }).find("is a thread_name event without a string args.name") != std::string::npos);
  CHECK(with([](json& d) {
          json kept = json::array();
          for (json& event : d["traceEvents"]) {
            if (!(event["name"] == "thread_name" && event["args"]["name"] == "hints")) kept.push_back(event);
          }
          d["traceEvents"] = kept;
        }) == "thread 2 of process 2 has events but no thread_name");
  CHECK(validate_perfetto_json("{\"traceEvents\":[]}") == "no process_name \"GPU\" for pid 1");
}

TEST_CASE("buffer events go on an allocator track named at the first one") {
  // Documents without buffer events (all those written before 1.4) have no such track.
  const json plain = json::parse(small_run());
  CHECK(thread_name(plain, 2, 4).empty());

  std::ostringstream out;
  PerfettoJsonWriter writer;
  REQUIRE(writer.open(out, "buffers", Timestamp{1'000'000}));
  REQUIRE(writer.write(
      BufferEvent{BufferEvent::Kind::handed_out, 1'000'000, 0x7000'0000'0000ull, kBlockBytes, 0}));
  REQUIRE(writer.write(
      BufferEvent{BufferEvent::Kind::returned, 1'002'000, 0x7000'0000'0000ull, kBlockBytes, 0x99}));
  REQUIRE(writer.finish());
  const std::string text = out.str();
  const std::string problem = validate_perfetto_json(text);
  CHECK_MESSAGE(problem.empty(), problem);
  const json document = json::parse(text);
  CHECK(thread_name(document, 2, 4) == "allocator buffers");
  std::size_t track_names = 0;
  for (const json& event : document["traceEvents"])
    if (event["ph"] == "M" && event["name"] == "thread_name" && event.value("tid", -1) == 4) ++track_names;
  CHECK(track_names == 1);
  const std::vector<json> handed = events_named(document, "i", "buffer handed out");
  REQUIRE(handed.size() == 1);
  CHECK(handed[0]["pid"] == 2);
  CHECK(handed[0]["tid"] == 4);
  CHECK(handed[0]["args"]["address"] == "0x700000000000");
  CHECK(handed[0]["args"]["bytes"] == kBlockBytes);
  CHECK_FALSE(handed[0]["args"].contains("stream"));
  const std::vector<json> returned = events_named(document, "i", "buffer returned");
  REQUIRE(returned.size() == 1);
  CHECK(returned[0]["ts"].get<double>() == doctest::Approx(2.0));
  CHECK(returned[0]["args"]["stream"] == "0x99");
}

TEST_CASE("write_perfetto_json draws a trace's buffer events, and its copies count toward the base time") {
  Trace trace;
  trace.ranges.push_back({RangeEvent::Kind::allocated, 40'000, 0x0, kBlockBytes});
  trace.buffer_events.push_back({BufferEvent::Kind::handed_out, 45'000, 0x0, 4096, 0});
  // Not drawn (its execution record is), but the earliest time in the trace.
  trace.copies.push_back({7, 0, 30'000, GpuOperation::memcpy, 1, {0x0, 0}, 4096, false});
  const json document = converted(trace, "deepum-convert-buffers.");
  CHECK(document["metadata"]["deepum_base_timestamp_ns"] == "30000");
  const std::vector<json> handed = events_named(document, "i", "buffer handed out");
  REQUIRE(handed.size() == 1);
  CHECK(handed[0]["ts"].get<double>() == doctest::Approx(15.0));
}
