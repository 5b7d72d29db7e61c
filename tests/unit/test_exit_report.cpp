// The exit report: the launch-time histogram, the GPU's time from records, the verdict, the
// summary's shape, and the stats_file's fields against docs/stats-format.md.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "deepum/core/exit_report.hpp"
#include "deepum/core/gpu_time.hpp"
#include "deepum/core/latency_histogram.hpp"

using namespace deepum::core;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kSecond = 1'000'000'000;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A run under a 10 GiB resident limit on an 80 GiB GPU with the engine running and nothing spent
// yet: each test adds the cost it is about.
ExitReport engine_run() {
  ExitReport r;
  r.process = "pid 7, python train.py";
  r.config_origin = "defaults";
  r.allocations.per_api[0].calls = 10;
  r.allocations.managed_allocations = 10;
  r.allocations.peak_managed_bytes = 20 * kGiB;
  r.allocations.alloc_limit_bytes = 40 * kGiB;
  r.allocations.resident_limit_bytes = 10 * kGiB;
  r.allocations.device_total_bytes = 80 * kGiB;
  r.run_ns = 100 * kSecond;
  r.tracing = PipelineStats{};
  r.tracing_status = "started";
  r.runtime = RuntimeCounters{};
  r.runtime->engine = EngineCounters{};
  r.runtime->engine->moves.launches = 10'000;
  r.runtime->engine->moves.fetches = 500;
  r.runtime->engine->moves.fetched_bytes = 100 * kGiB;
  r.runtime->engine->moves.evicted_bytes = 100 * kGiB;
  r.runtime->engine->moves.swapped_out_bytes = 90 * kGiB;
  r.runtime->program_thread.launch_callback.count = 10'000;
  r.tracing->gpu_time.executions = 10'000;
  r.tracing->gpu_time.waits_measured = 10'000;
  return r;
}

// The GPU waited `ns` after work was runnable, all of it behind deepum's moves.
void waited_behind_moves(ExitReport& r, std::uint64_t ns) {
  r.tracing->gpu_time.waited_ns = ns;
  r.tracing->gpu_time.waited_behind_moves_ns = ns;
}

}  // namespace

TEST_CASE("launch-time histogram: buckets a quarter octave wide, percentiles within a bucket") {
  const std::uint64_t values[] = {0,         1, 3, 4, 5, 7, 8, 1000, 4095, 4096, 123456789, UINT64_MAX / 3,
                                  UINT64_MAX};
  for (std::uint64_t v : values) {
    const std::size_t b = LatencyHistogram::bucket_of(v);
    REQUIRE(b < LatencyHistogram::kBuckets);
    CHECK((v == UINT64_MAX || LatencyHistogram::upper_bound(b) > v));
    if (b > 0) CHECK(LatencyHistogram::upper_bound(b - 1) <= v);
  }
  // Every bucket's upper bound is within a quarter of its lower one.
  for (std::size_t b = 5; b + 1 < LatencyHistogram::kBuckets; ++b) {
    const double low = static_cast<double>(LatencyHistogram::upper_bound(b - 1));
    CHECK(static_cast<double>(LatencyHistogram::upper_bound(b)) <= low * 1.25 + 1);
  }
  LatencyHistogram h;
  for (int i = 0; i < 98; ++i) h.record(3000);
  h.record(1'000'000);
  h.record(1'000'000);
  const LatencySummary s = h.summary();
  CHECK(s.count == 100);
  CHECK(s.total_ns == 98 * 3000 + 2'000'000);
  CHECK(s.max_ns == 1'000'000);
  CHECK(s.p50_ns >= 3000);
  CHECK(s.p50_ns <= 3750);
  CHECK(s.p99_ns == 1'000'000);  // the bucket's bound, capped at the largest value seen
  REQUIRE(s.buckets.size() == 2);
  CHECK(s.buckets[0].second == 98);
  CHECK(s.buckets[1].second == 2);
  CHECK(LatencyHistogram{}.summary().p50_ns == 0);
}

TEST_CASE("launch-time histogram: threads recording at once lose nothing") {
  LatencyHistogram h;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&h, t] {
      for (std::uint64_t i = 0; i < 10'000; ++i) h.record(i * static_cast<std::uint64_t>(t + 1));
    });
  }
  for (std::thread& thread : threads) thread.join();
  const LatencySummary s = h.summary();
  CHECK(s.count == 40'000);
  CHECK(s.max_ns == 9'999 * 4);
  CHECK(s.total_ns == 49'995'000ull * (1 + 2 + 3 + 4));
}

TEST_CASE("GPU time: waits after work was runnable, run times, fault time merged") {
  GpuTimeAccount account;
  account.on_launch(1, 100);
  account.on_launch(2, 120);
  KernelExecution a{1, 150, 300, 7};
  CHECK(account.on_execution(a) == 50);  // launched at 100, the stream idle: started 50 later
  KernelExecution b{2, 400, 500, 7};
  CHECK(account.on_execution(b) == 100);  // launched long before; runnable once a ended at 300
  KernelExecution unknown_launch{3, 600, 650, 7};
  CHECK(account.on_execution(unknown_launch) == 0);
  account.on_launch(4, 100);
  KernelExecution other_stream{4, 110, 200, 8};
  CHECK(account.on_execution(other_stream) == 10);
  account.on_launch(5, 100);
  KernelExecution late_record{5, 550, 560, 7};  // starts before the stream's last end: no wait
  CHECK(account.on_execution(late_record) == 0);
  account.on_fault({10, 20, 0x1000, 3, FaultAccess::read, 0});
  account.on_fault({15, 30, 0x2000, 2, FaultAccess::write, 0});
  account.on_fault({16, 90, 0x3000, 9, FaultAccess::prefetch, 0});  // a move's, not a kernel's
  account.on_fault({0, 5, 0x4000, 1, FaultAccess::read, 0});        // out of order: nothing added
  const GpuTime& t = account.totals();
  CHECK(t.executions == 5);
  CHECK(t.waits_measured == 4);
  CHECK(t.waited_ns == 160);
  CHECK(t.longest_wait_ns == 100);
  CHECK(t.busy_ns == 150 + 100 + 50 + 90 + 10);
  CHECK(t.fault_ns == 20);
  CHECK(t.fault_groups == 3);
  CHECK(t.faults == 6);
}

TEST_CASE("GPU time: the waits of launches behind deepum's moves are summed apart") {
  GpuTimeAccount account;
  account.on_launch(1, 100, /*behind_moves=*/true);
  account.on_launch(2, 400);
  account.on_launch(3, 900, /*behind_moves=*/true);
  CHECK(account.on_execution({1, 180, 300, 7}) == 80);  // behind a move
  CHECK(account.on_execution({2, 430, 500, 7}) == 30);  // the program's own wait
  CHECK(account.on_execution({3, 700, 950, 8}) == 0);   // started before its launch's time: no wait
  account.on_execution({4, 1000, 1100, 7});             // launch unknown: counted, not measured
  CHECK(account.totals().waited_ns == 110);
  CHECK(account.totals().waited_behind_moves_ns == 80);
  // A later launch with the same ring slot and no moves does not inherit the flag.
  GpuTimeAccount small(1);
  small.on_launch(1, 100, /*behind_moves=*/true);
  small.on_launch(2, 100);
  CHECK(small.on_execution({2, 150, 200, 1}) == 50);
  CHECK(small.totals().waited_behind_moves_ns == 0);
}

TEST_CASE("GPU time: launch times are kept for a fixed number of launches") {
  GpuTimeAccount account(4);
  for (std::uint64_t id = 1; id <= 8; ++id) account.on_launch(id, 10 * id);
  CHECK(account.on_execution({1, 1000, 1100, 1}) == 0);  // forgotten: counted, not measured
  CHECK(account.on_execution({8, 1200, 1300, 1}) == 100);
  CHECK(account.totals().executions == 2);
  CHECK(account.totals().waits_measured == 1);
}

TEST_CASE("verdict: what holds before costs are weighed") {
  ExitReport none;
  CHECK(judge(none).cause == Verdict::Cause::no_calls);

  ExitReport untraced = engine_run();
  untraced.tracing.reset();
  untraced.runtime.reset();
  untraced.tracing_status = "off (tracing: off)";
  CHECK(judge(untraced).cause == Verdict::Cause::untraced);
  CHECK(contains(judge(untraced).text, "tracing: off"));

  ExitReport whole = engine_run();
  whole.allocations.resident_limit_bytes = whole.allocations.device_total_bytes;
  CHECK(judge(whole).cause == Verdict::Cause::whole_gpu);
  CHECK(contains(judge(whole).text, "nothing to move"));
  whole.allocations.peak_managed_bytes = 120 * kGiB;
  CHECK(contains(judge(whole).text, "set resident_limit below the GPU's memory"));

  ExitReport no_engine = engine_run();
  no_engine.runtime->engine.reset();
  CHECK(judge(no_engine).cause == Verdict::Cause::no_engine);

  ExitReport over = engine_run();
  over.runtime->engine->moves.launches_over_limit = 200;  // 2% of the launches
  waited_behind_moves(over, 90 * kSecond);                // outweighed: the limit itself is too low
  CHECK(judge(over).cause == Verdict::Cause::launches_over_limit);
  CHECK(contains(judge(over).text, "200 of 10000 launches"));
  over.runtime->engine->moves.launches_over_limit = 50;  // 0.5%: the costs decide
  CHECK(judge(over).cause == Verdict::Cause::gpu_waits);

  ExitReport store = engine_run();
  store.runtime->engine->swap_store_error = "cuMemHostAlloc: out of memory";
  CHECK(judge(store).cause == Verdict::Cause::swap_store_full);
  CHECK(contains(judge(store).text, "cuMemHostAlloc: out of memory"));
}

TEST_CASE("verdict: the largest cost, and the change for it") {
  ExitReport waits = engine_run();
  waited_behind_moves(waits, 30 * kSecond);
  waits.tracing->gpu_time.fault_ns = 2 * kSecond;
  Verdict v = judge(waits);
  CHECK(v.cause == Verdict::Cause::gpu_waits);
  CHECK(contains(v.text, "30.00 s (30% of the 100.00 s run)"));
  CHECK(contains(v.text, "raise resident_limit"));
  waits.runtime->engine->moves.swapped_out_bytes = 0;  // victims written back by the driver
  CHECK(contains(judge(waits).text, "use mode fast, which swaps"));

  ExitReport faults = engine_run();
  faults.tracing->gpu_time.fault_ns = 20 * kSecond;
  faults.tracing->gpu_time.faults = 12345;
  faults.runtime->engine->moves.fetches = 0;
  v = judge(faults);
  CHECK(v.cause == Verdict::Cause::faults);
  CHECK(contains(v.text, "12345 page faults"));
  CHECK(contains(v.text, "use mode fast or safe, which prefetch"));
  faults.runtime->engine->moves.fetches = 10;
  faults.runtime->engine->moves.fetch_skipped_bytes = 3 * kGiB;
  CHECK(contains(judge(faults).text, "3.00 GiB left to faults"));

  ExitReport held = engine_run();
  held.runtime->program_thread.eviction_calls_ns = 20 * kSecond;
  held.runtime->program_thread.placement_calls_ns = 5 * kSecond;
  held.runtime->program_thread.launch_callback.total_ns = 27 * kSecond;
  waited_behind_moves(held, 40 * kSecond);  // the GPU ran dry while the thread was held
  v = judge(held);
  CHECK(v.cause == Verdict::Cause::thread_move_calls);
  CHECK(contains(v.text, "drop stream_ordered_eviction_thread=false"));
  held.runtime->engine->eviction_thread = true;
  CHECK(contains(judge(held).text, "raise resident_limit"));
  CHECK(!contains(judge(held).text, "waiting for the eviction thread"));
  held.runtime->program_thread.eviction_thread_waits_ns = 4 * kSecond;
  CHECK(contains(judge(held).text,
                 "waiting for the eviction thread to issue the evictions whose room they need 4.00 s"));
  waited_behind_moves(held, 80 * kSecond);  // far more than the thread explains
  CHECK(judge(held).cause == Verdict::Cause::gpu_waits);

  ExitReport copy_backs = engine_run();
  copy_backs.runtime->program_thread.host_copy_back_ns = 9 * kSecond;
  copy_backs.runtime->program_thread.launch_callback.total_ns = 10 * kSecond;
  copy_backs.runtime->engine->moves.unswaps = 40;
  copy_backs.runtime->tracer.graph_launches = 40;
  v = judge(copy_backs);
  CHECK(v.cause == Verdict::Cause::thread_copy_backs);
  CHECK(contains(v.text, "before 40 operations"));
  CHECK(contains(v.text, "use mode safe for this program"));

  ExitReport deciding = engine_run();
  deciding.runtime->program_thread.launch_callback.total_ns = 8 * kSecond;
  deciding.runtime->program_thread.launch_callback.p50_ns = 800'000;
  CHECK(judge(deciding).cause == Verdict::Cause::thread_decisions);
  CHECK(contains(judge(deciding).text, "median 800.0 us"));

  ExitReport quiet = engine_run();
  waited_behind_moves(quiet, 2 * kSecond);
  CHECK(judge(quiet).cause == Verdict::Cause::nothing_dominant);
  CHECK(contains(judge(quiet).text, "the GPU waited 2% of the run (2% behind deepum's moves)"));

  // The program's own waits (launch latency, its own syncs) are not deepum's moves: a run whose GPU
  // waited long, but not behind them, gets no verdict against the limit.
  ExitReport own = engine_run();
  own.tracing->gpu_time.waited_ns = 30 * kSecond;
  own.tracing->gpu_time.waited_behind_moves_ns = 1 * kSecond;
  CHECK(judge(own).cause == Verdict::Cause::nothing_dominant);
  CHECK(contains(judge(own).text, "the GPU waited 30% of the run (1% behind deepum's moves)"));
}

TEST_CASE("the summary is a compact block ending in the verdict") {
  ExitReport r = engine_run();
  for (std::size_t i = 0; i < kInterceptedApiCount; ++i) r.allocations.per_api[i].calls = i + 1;
  waited_behind_moves(r, 30 * kSecond);
  r.tracing->peak_resident_bytes = 10 * kGiB;
  r.tracing->replayed_ms = 90'000;
  const std::string summary = render_summary(r);
  std::istringstream in(summary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  CHECK(lines.size() <= 12);
  for (const std::string& line : lines) CHECK(line.size() <= 230);
  REQUIRE(!lines.empty());
  CHECK(lines.back().rfind("deepum verdict: the GPU waited 30.00 s", 0) == 0);
  CHECK(contains(summary, "more"));  // only the most called APIs are named
  CHECK(contains(summary, "to host: 90.00 GiB swapped out, 10.00 GiB written back by the driver"));
}

TEST_CASE("the summary's loop line says which loop planning used, and why not") {
  ExitReport r = engine_run();
  LaunchOrderedStats& m = r.runtime->engine->moves;
  m.shape_loop_period = 1054;
  m.namings_checked = 1000;
  m.namings_repeated = 790;
  m.victims_predicted_bytes = 22 * kGiB;
  m.restored_ahead_bytes = 20 * kGiB;
  CHECK(contains(
      render_summary(r),
      "loop: 1054 operations, learned from repeated shapes (79% of blocks named a period earlier too); "
      "victims 22.00 GiB by predicted next use, 20.00 GiB swapped in ahead"));
  m.victims_predicted_bytes = m.restored_ahead_bytes = 0;
  m.namings_repeated = 100;
  CHECK(
      contains(render_summary(r),
               "loop: shapes repeat every 1054 operations, blocks do not (10% named a period earlier too)"));
  m.loop_period = 48;
  CHECK(contains(render_summary(r), "loop: 48 operations, learned from repeated addresses"));
}

TEST_CASE("the summary splits the eviction thread's time, where it ran") {
  ExitReport r = engine_run();
  EngineCounters& e = *r.runtime->engine;
  CHECK_FALSE(contains(render_summary(r), "eviction thread:"));
  e.eviction_thread = true;
  e.eviction_thread_ns = 13 * kSecond;
  e.eviction_thread_copy_calls_ns = 6 * kSecond;
  e.eviction_thread_drops_ns = 7 * kSecond;
  e.eviction_thread_drop_copy_waits_ns = 2 * kSecond;
  e.eviction_thread_drop_calls_ns = 4 * kSecond;
  CHECK(
      contains(render_summary(r),
               "eviction thread: in move calls 13.00 s (copies into the store 6.00 s; drops 7.00 s, of them "
               "waiting for the copies 2.00 s, drop calls 4.00 s)"));
  e.eviction_thread_ns = 0;  // it moved nothing
  CHECK_FALSE(contains(render_summary(r), "eviction thread:"));
}

TEST_CASE("the summary says how much host memory the swap store pinned, and how long that took") {
  ExitReport r = engine_run();
  EngineCounters& e = *r.runtime->engine;
  CHECK_FALSE(contains(render_summary(r), "swap store:"));
  e.swap_store_pinned_bytes = 14 * kGiB;
  e.swap_store_pin_ns = 4 * kSecond;
  CHECK(contains(render_summary(r), "swap store: 14.00 GiB of pinned host memory, pinned in 4.00 s"));
}

TEST_CASE("the summary says when the program's stream memory waits held the engine's moves") {
  ExitReport r = engine_run();
  CHECK_FALSE(contains(render_summary(r), "held:"));
  r.runtime->engine->held_by_value_waits = 72;
  CHECK(contains(
      render_summary(r),
      "held: 72 operations moved nothing while a stream memory wait of the program's might still wait"));
}

namespace {

// Every leaf of the document as a dotted path; the keys of "calls" and "launches_by_api" (API
// names) written <api>; arrays are leaves.
void leaf_paths(const nlohmann::json& value, const std::string& path, std::set<std::string>& out) {
  if (!value.is_object()) {
    out.insert(path);
    return;
  }
  const bool named_by_api = path == "calls" || path == "tracer.launches_by_api";
  for (const auto& [key, child] : value.items()) {
    const std::string name = named_by_api ? "<api>" : key;
    leaf_paths(child, path.empty() ? name : path + "." + name, out);
  }
}

ExitReport everything_counted() {
  ExitReport r = engine_run();
  r.allocations.devices = {{0, 40 * kGiB, 20 * kGiB}, {1, 40 * kGiB, kGiB}};
  r.runtime->device_engines = {{0, 20 * kGiB, *r.runtime->engine}, {1, 20 * kGiB, *r.runtime->engine}};
  r.runtime->tracer.launches_by_api = {{"cuLaunchKernel", 9}};
  r.runtime->program_thread.launch_callback.buckets = {{5, 1}};
  return r;
}

}  // namespace

TEST_CASE("the stats_file holds every counter as a field, each documented in docs/stats-format.md") {
  ExitReport r = everything_counted();
  r.runtime->engine->moves.placed_bytes = 123;
  r.runtime->program_thread.prefetch_calls_ns = 456;
  r.runtime->engine->eviction_thread_ns = 789;
  r.runtime->engine->eviction_thread_copy_calls_ns = 654;
  r.runtime->engine->eviction_thread_drops_ns = 100;
  r.runtime->engine->eviction_thread_drop_copy_waits_ns = 60;
  r.runtime->engine->eviction_thread_drop_calls_ns = 30;
  r.runtime->engine->swap_store_pin_ns = 40;
  r.runtime->program_thread.placement_copy_calls_ns = 321;
  const nlohmann::json doc = nlohmann::json::parse(render_json(r));
  CHECK(doc["schema_version"] == 2);
  CHECK(doc["engine"]["moves"]["placed_bytes"] == 123);
  CHECK(doc["program_thread"]["move_calls_ns"]["prefetches"] == 456);
  CHECK(doc["engine"]["eviction_thread"]["move_calls_ns"] == 789);
  CHECK(doc["engine"]["eviction_thread"]["copy_calls_ns"] == 654);
  CHECK(doc["engine"]["eviction_thread"]["drops_ns"] == 100);
  CHECK(doc["engine"]["eviction_thread"]["drop_copy_waits_ns"] == 60);
  CHECK(doc["engine"]["eviction_thread"]["drop_calls_ns"] == 30);
  CHECK(doc["engine"]["swap_store_pin_ns"] == 40);
  CHECK(doc["program_thread"]["placement_copy_calls_ns"] == 321);
  CHECK(doc["program_thread"]["launch_callback"]["buckets"] == nlohmann::json::parse("[[5, 1]]"));
  CHECK(doc["tracer"]["launches_by_api"]["cuLaunchKernel"] == 9);
  CHECK(doc["verdict"]["cause"] == "nothing_dominant");
  CHECK(doc["tracing"]["gpu_time"]["executions"] == 10'000);
  CHECK(doc["engines_by_device"][1]["device"] == 1);
  CHECK(doc["engines_by_device"][1]["resident_limit_bytes"] == 20 * kGiB);
  std::set<std::string> rendered;
  leaf_paths(doc, "", rendered);

  std::ifstream file(std::string(DEEPUM_SOURCE_DIR) + "/docs/stats-format.md");
  REQUIRE(file.good());
  // Rows of the field tables: | `path` | type | meaning |
  std::set<std::string> documented;
  for (std::string line; std::getline(file, line);) {
    if (!line.starts_with("| `")) continue;
    const std::size_t close = line.find("` | ", 3);
    if (close == std::string::npos) continue;
    const std::string type = line.substr(close + 4, line.find(" |", close + 4) - close - 4);
    if (type == "integer" || type == "string" || type == "array" || type == "boolean")
      documented.insert(line.substr(3, close - 3));
  }
  for (const std::string& path : rendered)
    CHECK_MESSAGE(documented.count(path) == 1, "undocumented: " << path);
  for (const std::string& path : documented)
    CHECK_MESSAGE(rendered.count(path) == 1, "not written: " << path);
}
