// `deepum report`: a fabricated run (trace and statistics) analysed and drawn; RUN found as a
// directory, a trace, a prefix or a statistics file; every bad input one message and an exit
// status, never an abort.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "deepum/core/exit_report.hpp"
#include "deepum/core/run_report.hpp"
#include "deepum/core/trace_commands.hpp"
#include "deepum/core/trace_file.hpp"

using namespace deepum::core;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kBase = 0x100000000;
constexpr Timestamp kStart = 1'000'000'000;

// A folder of its own, removed at the end.
struct Folder {
  fs::path path;
  Folder() : path(fs::temp_directory_path() / ("deepum-report-test." + std::to_string(getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// 100 launches 100 us apart on one stream, alternating a kernel that waits 50 us after its launch
// (and faults for 10 us while it runs) and one that waits 5 us; 32 MiB in and out every 20 launches
// under a 64 MiB limit.
void write_trace(const std::string& path) {
  TraceWriter writer;
  REQUIRE(writer.open(path));
  REQUIRE(writer.write_metadata({{"resident_limit_bytes", std::to_string(64 * kMiB)},
                                 {"command_line", "python train.py"},
                                 {"device_name", "Test GPU"}}));
  writer.define_function(1, "gemm_kernel<float>&co");
  writer.define_function(2, "relu");
  writer.write(RangeEvent{RangeEvent::Kind::allocated, kStart, kBase, 256 * kMiB});
  for (std::uint64_t i = 0; i < 100; ++i) {
    const bool gemm = i % 2 == 0;
    KernelLaunch launch;
    launch.correlation_id = 10 + i;
    launch.function = gemm ? 1 : 2;
    launch.host_time = kStart + i * 100'000;
    writer.write(launch);
    const Timestamp start = launch.host_time + (gemm ? 50'000 : 5'000);
    writer.write(KernelExecution{launch.correlation_id, start, start + 30'000, 7});
    if (gemm)
      writer.write(PageFault{start + 1'000, start + 11'000, kBase + i * 2 * kMiB, 4, FaultAccess::read, 0});
    if (i % 20 == 0) {
      writer.write(Migration{start, start + 2'000, kBase + i * kMiB, 32 * kMiB,
                             MigrationDirection::host_to_device, MigrationCause::user});
      writer.write(ResidentSample{start, (i / 20 + 1) * 16 * kMiB, 0});
    }
    if (i % 20 == 10)
      writer.write(Migration{start, start + 2'000, kBase + (i - 10) * kMiB, 32 * kMiB,
                             MigrationDirection::device_to_host, MigrationCause::eviction});
  }
  REQUIRE(writer.finish());
}

std::string write_stats(const std::string& path) {
  ExitReport r;
  r.process = "pid 9, python train.py";
  r.config_origin = "defaults";
  r.allocations.per_api[0].calls = 3;
  r.allocations.resident_limit_bytes = 64 * kMiB;
  r.allocations.device_total_bytes = 1024 * kMiB;
  r.run_ns = 20'000'000;
  r.tracing = PipelineStats{};
  r.tracing->gpu_time.executions = 100;
  r.tracing->gpu_time.waited_ns = 2'750'000;
  r.tracing->gpu_time.waited_behind_moves_ns = 2'750'000;
  r.runtime = RuntimeCounters{};
  r.runtime->engine = EngineCounters{};
  r.runtime->program_thread.launch_callback = {100,    400'000, 3'072,
                                               40'960, 50'000,  {{3'072, 60}, {40'960, 40}}};
  const std::string text = render_json(r);
  write_text(path, text);
  return text;
}

struct Outcome {
  int status;
  std::string out, err;
};

Outcome report(const ReportRequest& request) {
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  const int status = run_report_command(request, out, err);
  const auto text = [](std::FILE* f) {
    std::string s(static_cast<std::size_t>(std::ftell(f)), '\0');
    std::rewind(f);
    s.resize(std::fread(s.data(), 1, s.size(), f));
    std::fclose(f);
    return s;
  };
  return {status, text(out), text(err)};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report: the trace analysed: waits, faults and residency by kernel and over time") {
  Folder folder;
  write_trace(folder.file("run.dtrace"));
  const TraceReadResult read = read_trace(folder.file("run.dtrace"));
  REQUIRE(read);
  const TraceAnalysis a = analyze_trace(*read.trace, "run.dtrace");
  CHECK(a.limit_bytes == 64 * kMiB);  // from the trace's metadata
  CHECK(a.gpu.executions == 100);
  CHECK(a.gpu.waits_measured == 100);
  CHECK(a.gpu.waited_ns == 50 * 50'000 + 50 * 5'000);
  CHECK(a.gpu.fault_ns == 50 * 10'000);
  REQUIRE(a.kernels.size() == 2);
  CHECK(a.kernels[0].name == "gemm_kernel<float>&co");
  CHECK(a.kernels[0].executions == 50);
  CHECK(a.kernels[0].waited_ns == 50 * 50'000);
  CHECK(a.kernels[0].faults == 200);
  CHECK(a.kernels[0].fault_ns == 50 * 10'000);
  CHECK(a.kernels[1].name == "relu");
  CHECK(a.kernels[1].fault_groups == 0);
  CHECK(a.residency.peak_bytes == 32 * kMiB);
  CHECK(a.timeline.size() <= kMaxReportIntervals);
  std::uint64_t to_gpu = 0, faults = 0;
  Timestamp waited = 0;
  for (const ReportInterval& i : a.timeline) {
    to_gpu += i.to_gpu_bytes;
    faults += i.faults;
    waited += i.waited_ns;
  }
  CHECK(to_gpu == 5 * 32 * kMiB);
  CHECK(faults == 200);
  CHECK(waited == a.gpu.waited_ns);
}

TEST_CASE("report: a run's directory gives one page with every section, nothing fetched") {
  Folder folder;
  write_trace(folder.file("trace.dtrace"));
  write_text(folder.file("trace.perfetto.json"), "{}");  // a trace for the eye: not the statistics
  write_stats(folder.file("stats.json"));
  const Outcome done = report({folder.path.string(), "", ""});
  REQUIRE(done.status == kTraceCommandDone);
  CHECK(done.err.empty());
  CHECK(contains(done.out, "deepum-report.html"));
  const std::string html = read_text(folder.file("deepum-report.html"));
  for (const char* id : {"verdict", "residency", "time-split", "kernel-stalls", "program-thread", "counters"})
    CHECK_MESSAGE(contains(html, std::string("<section id=\"") + id + "\">"), id);
  CHECK(count(html, "class=\"missing\"") == 0);  // both files: every section has what it needs
  CHECK(count(html, "<svg") == count(html, "</svg>"));
  CHECK(count(html, "<svg") >= 6);  // residency, moves, activity, time split, kernels, launch times
  CHECK(count(html, "<section") == count(html, "</section>"));
  CHECK(contains(html, "gemm_kernel&lt;float&gt;&amp;co"));
  CHECK(contains(html, "resident limit 64.00 MiB"));
  CHECK(contains(html, "<p class=\"verdict\">the GPU waited 2.8 ms"));  // the statistics' verdict
  CHECK(contains(html, "<code>program_thread.launch_callback.p99_ns</code></td><td>40960"));
  for (const char* outside : {"<script", "http:", "https:", "src=", "href=", "url(", "@import"})
    CHECK_MESSAGE(!contains(html, outside), outside);
}

TEST_CASE("report: RUN as a trace, a prefix or a statistics file; the output next to it") {
  Folder folder;
  write_trace(folder.file("run.dtrace"));
  write_stats(folder.file("run-stats.json"));
  std::string error;
  std::optional<ReportInputs> in = find_report_inputs({folder.file("run.dtrace"), "", ""}, error);
  REQUIRE(in);
  CHECK(in->trace == folder.file("run.dtrace"));
  CHECK(in->out == folder.file("run.html"));
  in = find_report_inputs({folder.file("run"), folder.file("run-stats.json"), folder.file("x.html")}, error);
  REQUIRE(in);
  CHECK(in->trace == folder.file("run.dtrace"));
  CHECK(in->stats == folder.file("run-stats.json"));
  CHECK(in->out == folder.file("x.html"));

  const Outcome trace_only = report({folder.file("run.dtrace"), "", ""});
  REQUIRE(trace_only.status == kTraceCommandDone);
  const std::string html = read_text(folder.file("run.html"));
  CHECK(contains(html, "The verdict comes from the statistics file"));
  CHECK(contains(html, "<section id=\"kernel-stalls\">"));

  const Outcome stats_only = report({folder.file("run-stats.json"), "", ""});
  REQUIRE(stats_only.status == kTraceCommandDone);
  const std::string page = read_text(folder.file("run-stats.html"));
  CHECK(contains(page, "Needs the trace file"));
  CHECK(contains(page, "<p class=\"verdict\">the GPU waited"));
}

TEST_CASE("report: the GPU's waits behind deepum's moves, and files written before they were told apart") {
  std::string error;
  const auto view = [&](const std::string& gpu_time) {
    return parse_stats(R"({"schema_version": 2, "tracing": {"gpu_time": )" + gpu_time + "}}", "s.json",
                       error);
  };
  std::optional<StatsView> now = view(R"({"waited_ns": 900, "waited_behind_moves_ns": 300})");
  REQUIRE(now);
  CHECK(now->gpu.waited_ns == 900);
  CHECK(now->gpu.waited_behind_moves_ns == 300);
  std::optional<StatsView> older = view(R"({"waited_ns": 900})");  // every wait counted as behind moves
  REQUIRE(older);
  CHECK(older->gpu.waited_behind_moves_ns == 900);
  CHECK(!view(R"({"waited_ns": 900, "waited_behind_moves_ns": "some"})"));
  CHECK(contains(error, "tracing.gpu_time.waited_behind_moves_ns"));
}

TEST_CASE("report: bad input is one message and status 2; an unwritable page status 1") {
  Folder folder;
  const auto fails = [](const ReportRequest& request, int status, const std::string& message) {
    const Outcome o = report(request);
    CHECK(o.status == status);
    CHECK_MESSAGE(contains(o.err, message), o.err);
    CHECK(o.out.empty());
  };
  fails({folder.file("nothing"), "", ""}, kTraceCommandBadInput,
        "no such directory, trace or statistics file");
  fails({folder.path.string(), "", ""}, kTraceCommandBadInput,
        "holds no trace (.dtrace) and no statistics file");
  write_text(folder.file("a.dtrace"), "not a trace at all");
  fails({folder.file("a.dtrace"), "", ""}, kTraceCommandBadInput, "not a deepum trace");
  write_text(folder.file("b.dtrace"), "");
  fails({folder.path.string(), "", ""}, kTraceCommandBadInput, "holds 2 traces");

  write_trace(folder.file("good.dtrace"));
  const auto bad_stats = [&](const std::string& text, const std::string& message) {
    write_text(folder.file("s.json"), text);
    fails({folder.file("good.dtrace"), folder.file("s.json"), ""}, kTraceCommandBadInput, message);
  };
  bad_stats("{not json", "not JSON");
  bad_stats(R"({"process": "x"})", "no schema_version");
  bad_stats(R"({"schema_version": 3})", "a newer deepum wrote it");
  bad_stats(R"({"schema_version": 0})", "this deepum reads versions 1 to 2");
  bad_stats(R"({"schema_version": "1"})", "schema_version \"1\"");
  bad_stats(R"({"schema_version": 1, "run_ns": "soon"})", "field run_ns has the wrong type");
  bad_stats(R"({"schema_version": 1, "program_thread": {"launch_callback": {"buckets": [[1]]}}})",
            "field program_thread.launch_callback.buckets");
  fails({folder.file("good.dtrace"), folder.file("none.json"), ""}, kTraceCommandBadInput, "none.json");

  std::string deep = R"({"schema_version": 1, "x": )";
  for (int i = 0; i < 20'000; ++i) deep += R"({"a": )";
  deep += "1" + std::string(20'000, '}') + "}";
  write_text(folder.file("deep.json"), deep);
  const Outcome deep_ok =
      report({folder.file("good.dtrace"), folder.file("deep.json"), folder.file("deep.html")});
  CHECK(deep_ok.status == kTraceCommandDone);  // nesting deeper than deepum writes is left out

  fails({folder.file("good.dtrace"), "", folder.file("no/such/folder/r.html")}, kTraceCommandFailed,
        "no/such/folder/r.html");
}
