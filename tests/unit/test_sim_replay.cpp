// The simulator's workload model and replay: fault attribution and touch sets, plain-UM LRU with
// exact times, the timeline, Belady's victim, hint timing, the oracle against plain UM,
// determinism, errors.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "deepum/core/trace_file.hpp"
#include "deepum/sim/engine.hpp"
#include "deepum/sim/generator.hpp"
#include "deepum/sim/policies.hpp"
#include "deepum/sim/report.hpp"
#include "deepum/sim/timeline.hpp"
#include "deepum/sim/workload.hpp"
#include "temp_file.hpp"

using namespace deepum;
using namespace deepum::sim;

namespace {

constexpr std::uint64_t kMiB2 = std::uint64_t{2} << 20;
constexpr std::uint64_t kA = std::uint64_t{1} << 30, kB = std::uint64_t{2} << 30, kC = std::uint64_t{3} << 30;

struct Kernel {
  std::uint64_t start = 0;
  std::uint64_t duration = 0;
  std::vector<std::uint64_t> faults;    // addresses faulted during the kernel
  std::vector<std::uint64_t> pointers;  // managed pointers among its arguments
  std::uint64_t key = 0;                // 0: the kernel's index + 1
};

// A trace written by TraceWriter, read back by the normal reader, made into a workload.
Workload workload_of(const std::vector<Kernel>& kernels, WorkloadOptions options = {},
                     const std::vector<core::RangeEvent>& ranges = {}) {
  std::ostringstream bytes;
  core::TraceWriter writer;
  REQUIRE(writer.open(bytes));
  for (const auto& range : ranges) writer.write(range);
  std::uint64_t correlation = 100;
  REQUIRE(writer.define_function(7, "sim_test_kernel"));
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    core::KernelLaunch launch;
    launch.correlation_id = ++correlation;
    launch.execution_key = k.key != 0 ? k.key : i + 1;
    launch.function = 7;
    launch.host_time = k.start - 100;
    for (std::uint64_t p : k.pointers) launch.pointers[launch.pointer_count++] = p;
    writer.write(launch);
    for (std::uint64_t address : k.faults) {
      writer.write(core::PageFault{k.start + 10, k.start + 20, address, 1, core::FaultAccess::read, 0});
    }
    writer.write(core::KernelExecution{launch.correlation_id, k.start, k.start + k.duration, 1, 0,
                                       core::GpuOperation::kernel, 0, 0});
  }
  REQUIRE(writer.finish());
  const std::string text = bytes.str();
  const core::TraceReadResult read =
      core::read_trace_from_memory(std::as_bytes(std::span(text)), "hand.dtrace");
  REQUIRE_MESSAGE(read.trace.has_value(), read.error);
  WorkloadLoad load = build_workload(*read.trace, options);
  REQUIRE_MESSAGE(load.ok(), load.error);
  return std::move(load.workload);
}

std::vector<BlockIndex> blocks(const Workload& w, std::size_t k) {
  const auto span = w.blocks_of(k);
  return {span.begin(), span.end()};
}

SimResult run(const Workload& w, const MachineModel& m, std::string_view policy_name, std::uint64_t capacity,
              bool record = false) {
  auto policy = make_policy(policy_name);
  REQUIRE(policy != nullptr);
  return simulate(w, m, *policy, RunOptions{capacity, record});
}

// Policy that evicts blocks A and B before kernel 1 and prefetches them before kernel 2.
class ScriptedPolicy final : public Policy {
 public:
  std::string_view name() const override { return "scripted"; }
  void before_kernel(std::uint32_t k, Executor& executor) override {
    const std::vector<BlockIndex> ab{0, 1};
    if (k == 1) executor.evict(ab);
    if (k == 2) executor.prefetch(ab);
  }
};

// Before K1 writes B back; before K2 writes A back and brings B in, the two at once.
class BothWaysPolicy final : public Policy {
 public:
  std::string_view name() const override { return "both ways"; }
  void before_kernel(std::uint32_t k, Executor& executor) override {
    const std::vector<BlockIndex> a{0}, b{1};
    if (k == 1) executor.evict(b);
    if (k == 2) {
      executor.evict(a);
      executor.prefetch(b);
    }
  }
};

}  // namespace

TEST_CASE("sim executor: migrations to the GPU wait for those to the host unless they overlap") {
  const Workload w = workload_of({
      {1'000'000, 1'000'000, {kA, kB}, {}},
      {3'000'000, 1'000'000, {kC}, {}},
      {5'000'000, 1'000'000, {kB}, {}},
  });
  MachineModel m = MachineModel::h200();
  m.migrations_overlap = false;
  BothWaysPolicy serial_policy;
  const SimStats serial = simulate(w, m, serial_policy, RunOptions{3, false}).stats;
  m.migrations_overlap = true;
  BothWaysPolicy overlapped_policy;
  const SimStats overlapped = simulate(w, m, overlapped_policy, RunOptions{3, false}).stats;
  // Before K2 (K1 ends at 2'054'000 + 27'000): the evict call returns 230 us later and A's write-back
  // takes 139'811 ns; the prefetch call returns 110 us after that call. Overlapped, B arrives 42'800
  // ns after its call; taking turns, 42'800 ns after A's write-back, 29'811 ns later.
  CHECK(serial.total_ns - overlapped.total_ns == 29'811);
  CHECK(serial.h2d_bytes == overlapped.h2d_bytes);
  CHECK(serial.d2h_bytes == overlapped.d2h_bytes);
}

TEST_CASE("sim workload: faults go to the kernel whose time holds them; pointers add their block") {
  const Workload w = workload_of({
      {1'000'000, 1'000, {kA, kA + 4096}, {}},
      {2'000'000, 1'000, {kB}, {kC + 100}},
      {3'000'000, 1'000, {}, {}},
  });
  REQUIRE(w.kernels.size() == 3);
  CHECK(w.block_count() == 3);
  CHECK(w.block_ids ==
        std::vector<core::BlockId>{core::block_of(kA), core::block_of(kB), core::block_of(kC)});
  CHECK(blocks(w, 0) == std::vector<BlockIndex>{0});
  CHECK(blocks(w, 1) == std::vector<BlockIndex>{1, 2});
  CHECK(blocks(w, 2).empty());
  CHECK(w.stats.faults_attributed == 3);
  CHECK(w.kernels[1].compute_ns == 1'000);
  CHECK(w.iterations == 1);
}

TEST_CASE("sim workload: executions of one key share their blocks and their shortest time") {
  // Same key 9 twice: first faults on A (and is slowed down by it), then runs fault-free.
  const std::vector<Kernel> kernels{
      {1'000'000, 50'000, {kA}, {}, 9},
      {2'000'000, 1'000, {kB}, {}, 5},
      {3'000'000, 2'000, {}, {}, 9},
      {4'000'000, 1'000, {kB}, {}, 5},
  };
  const Workload merged = workload_of(kernels);
  CHECK(blocks(merged, 2) == std::vector<BlockIndex>{0});
  CHECK(merged.kernels[0].compute_ns == 2'000);
  CHECK(merged.kernels[2].compute_ns == 2'000);
  CHECK(merged.iterations == 2);
  const Workload separate = workload_of(kernels, WorkloadOptions{false, false});
  CHECK(blocks(separate, 2).empty());
  CHECK(separate.kernels[0].compute_ns == 50'000);
}

TEST_CASE("sim workload: repeating structure") {
  const auto steps = [](std::vector<std::uint64_t> keys) {
    std::vector<KernelStep> out;
    for (auto key : keys) out.push_back(KernelStep{0, key, core::GpuOperation::kernel, 0, 0, 0});
    return out;
  };
  CHECK(detect_iterations(steps({1, 2, 3, 1, 2, 3, 1, 2, 3})) == 3);
  CHECK(detect_iterations(steps({1, 2, 1, 3, 1, 2, 1, 3})) == 2);
  CHECK(detect_iterations(steps({1, 2, 3, 4})) == 1);
  CHECK(detect_iterations(steps({1, 2, 1, 2, 1})) == 2);  // a partial last iteration
  CHECK(detect_iterations(steps({})) == 1);
}

namespace {

// Two blocks of GPU; K0 populates A and B, K1 populates C (evicting A, least recently used),
// K2 brings A back (evicting B).
Workload lru_case() {
  return workload_of({
      {1'000'000, 1'000, {kA, kB}, {}},
      {2'000'000, 2'000, {kC}, {}},
      {3'000'000, 3'000, {kA}, {}},
  });
}

MachineModel lru_case_machine() {
  MachineModel m = MachineModel::h200();
  m.fault_us = 10;
  m.evict_d2h_gb_per_s = 2;  // 2 MiB: 1'048'576 ns
  m.fault_h2d_gb_per_s = 4;  // 2 MiB: 524'288 ns
  return m;
}

}  // namespace

TEST_CASE("sim reactive: LRU eviction on the faulting kernel's path, exact times") {
  const Workload w = lru_case();
  const SimResult r = run(w, lru_case_machine(), "reactive", 2, true);
  const SimStats& s = r.stats;
  CHECK(s.compute_ns == 6'000);
  CHECK(s.stall_ns == 20'000 + (1'048'576 + 10'000) + (1'048'576 + 524'288));
  CHECK(s.total_ns == 2'657'440);
  CHECK(s.faults == 4);
  CHECK(s.populate_faults == 3);
  CHECK(s.driver_evictions == 2);
  CHECK(s.h2d_bytes == kMiB2);
  CHECK(s.d2h_bytes == 2 * kMiB2);
  CHECK(s.transfer_calls() == 0);
  CHECK(r.evictions == std::vector<EvictionRecord>{{1, 0, EvictionRecord::Cause::fault},
                                                   {2, 1, EvictionRecord::Cause::fault}});
}

TEST_CASE("sim timeline: each operation when it ran, each way's moves back to back as one") {
  // The case above, recorded: K1 waits for A's write-back, K2 for B's, then A's copy back; the
  // moves to the host are apart (K1 runs between them).
  const Workload w = lru_case();
  auto policy = make_policy("reactive");
  RunOptions options{2, false};
  options.record_timeline = true;
  const SimResult r = simulate(w, lru_case_machine(), *policy, options);
  using Kind = TimelineEvent::Kind;
  std::vector<TimelineEvent> operations, to_host, to_gpu;
  for (const TimelineEvent& e : r.timeline)
    (e.kind == Kind::operation ? operations : e.kind == Kind::to_host ? to_host : to_gpu).push_back(e);
  REQUIRE(operations.size() == 3);
  for (std::uint32_t k = 0; k < 3; ++k) {
    CHECK(operations[k].kernel == k);
    CHECK(operations[k].end - operations[k].start == w.kernels[k].compute_ns);
    if (k > 0) CHECK(operations[k].start >= operations[k - 1].end);
  }
  CHECK(operations.back().end == r.stats.total_ns);
  // K1's fault writes A back (1'048'576 ns) as K0 ends.
  REQUIRE(to_host.size() == 2);
  CHECK(to_host[0] ==
        TimelineEvent{Kind::to_host, 1, operations[0].end, operations[0].end + 1'048'576, kMiB2});
  CHECK(to_host[1].kernel == 2);
  CHECK(to_host[1].start >= operations[1].end);
  REQUIRE(to_gpu.size() == 1);
  CHECK(to_gpu[0] == TimelineEvent{Kind::to_gpu, 2, to_host[1].end, to_host[1].end + 524'288, kMiB2});
  CHECK(operations[2].start == to_gpu[0].end);

  // As a trace: the operations named by their function on the first stream track, the moves as
  // copies of their kind and bytes (what bench/phase_breakdown.py reads).
  const nlohmann::json trace = nlohmann::json::parse(timeline_json(w, r.timeline));
  std::vector<nlohmann::json> executions;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") executions.push_back(e);
  }
  REQUIRE(executions.size() == 6);
  std::size_t kernels = 0;
  std::uint64_t to_host_bytes = 0, to_gpu_bytes = 0;
  for (const auto& e : executions) {
    CHECK(e["pid"] == 1);
    if (e["tid"] == 10) {
      CHECK(e["name"] == "sim_test_kernel");
      ++kernels;
    } else {
      CHECK(e["name"].get<std::string>().starts_with("memcpy "));
      (e["args"]["kind"] == "DtoH" ? to_host_bytes : to_gpu_bytes) += e["args"]["bytes"].get<std::uint64_t>();
    }
  }
  CHECK(kernels == 3);
  CHECK(to_host_bytes == r.stats.d2h_bytes);
  CHECK(to_gpu_bytes == r.stats.h2d_bytes);
  CHECK(executions.back()["ts"].get<double>() ==
        doctest::Approx(static_cast<double>(operations[2].start) / 1e3));
}

TEST_CASE("sim oracle: Belady evicts the block whose next use is farthest") {
  // K1 needs room: A is used again by K2, B only by K3. LRU takes A; Belady takes B.
  const Workload w = workload_of({
      {1'000'000, 1'000, {kA, kB}, {}},
      {2'000'000, 1'000, {kC}, {}},
      {3'000'000, 1'000, {kA}, {}},
      {4'000'000, 1'000, {kB}, {}},
  });
  const MachineModel m = MachineModel::h200();
  const SimResult reactive = run(w, m, "reactive", 2, true);
  const SimResult oracle = run(w, m, "oracle", 2, true);
  REQUIRE_FALSE(reactive.evictions.empty());
  REQUIRE_FALSE(oracle.evictions.empty());
  CHECK(reactive.evictions[0].block == 0);                                          // A
  CHECK(oracle.evictions[0] == EvictionRecord{1, 1, EvictionRecord::Cause::hint});  // B, ahead of K1
  CHECK(reactive.stats.h2d_bytes == 2 * kMiB2);                                     // A and B come back
  CHECK(oracle.stats.h2d_bytes == kMiB2);                                           // only B
  CHECK(oracle.stats.total_ns < reactive.stats.total_ns);

  // The victim choice itself, on the same state: after K0 the next uses are A: 2, B: 3.
  OraclePolicy policy;
  simulate(w, m, policy, RunOptions{2, false});
  CHECK(policy.next_use(0) == 4);  // after the replay nothing is used again
}

TEST_CASE("sim executor: hint calls cost host time, then the link") {
  // A and B adjacent: one call each way. K0 populates them (27 us each), the policy writes them back
  // before K1 and prefetches them before K2.
  const Workload w = workload_of({
      {1'000'000, 1'000'000, {kA, kA + kMiB2}, {}},
      {3'000'000, 1'000'000, {kC}, {}},
      {5'000'000, 1'000'000, {kA, kA + kMiB2}, {}, 77},
  });
  ScriptedPolicy policy;
  const SimResult r = simulate(w, MachineModel::h200(), policy, RunOptions{3, false});
  const SimStats& s = r.stats;
  // K0: 54'000 of faults, ends at 1'054'000. Evict call: host until 1'284'000, then 139'811 per block.
  // K1: C populated (27 us) at 1'081'000, ends 2'081'000. Prefetch call: host until 2'191'000, then
  // 42'800 per block: K2 starts at 2'276'600.
  CHECK(s.evict_calls == 1);
  CHECK(s.prefetch_calls == 1);
  CHECK(s.evicted_blocks == 2);
  CHECK(s.prefetched_blocks == 2);
  CHECK(s.d2h_bytes == 2 * kMiB2);
  CHECK(s.h2d_bytes == 2 * kMiB2);
  CHECK(s.faults == 3);
  CHECK(s.stall_ns == 54'000 + 27'000 + 195'600);
  CHECK(s.total_ns == 3'276'600);
}

TEST_CASE("sim executor: a freed range leaves the GPU without a transfer") {
  const std::vector<core::RangeEvent> ranges{
      {core::RangeEvent::Kind::allocated, 10, kA, 2 * kMiB2},
      {core::RangeEvent::Kind::freed, 1'500'000, kA, 2 * kMiB2},
  };
  const Workload w = workload_of({{1'000'000, 1'000, {kA, kA + kMiB2}, {}}, {2'000'000, 1'000, {kB, kC}, {}}},
                                 WorkloadOptions{}, ranges);
  REQUIRE(w.releases.size() == 1);
  CHECK(w.releases[0].before_kernel == 1);
  CHECK(w.releases[0].count == 2);
  CHECK(w.stats.managed_peak_bytes == 2 * kMiB2);
  const SimResult r = run(w, MachineModel::h200(), "reactive", 2);
  CHECK(r.stats.released_blocks == 2);
  CHECK(r.stats.driver_evictions == 0);
  CHECK(r.stats.d2h_bytes == 0);
}

TEST_CASE("sim: a kernel larger than the GPU cannot run") {
  const Workload w = workload_of({{1'000'000, 1'000, {kA, kB, kC}, {}}});
  CHECK_THROWS_AS(run(w, MachineModel::h200(), "reactive", 2), std::invalid_argument);
}

TEST_CASE("sim: on generated traces floor <= oracle <= reactive, and replays are deterministic") {
  for (const char* model : {"tiny", "gpt2-124m"}) {
    TempFile file(std::string("sim_order_") + model);
    GeneratorOptions options;
    options.model = model;
    options.batch = 2;
    options.seq = 128;
    options.iterations = 3;
    REQUIRE(generate_trace_file(options, file.str()).ok());
    const WorkloadLoad load = load_workload(file.str());
    REQUIRE_MESSAGE(load.ok(), load.error);
    const Workload& w = load.workload;
    CHECK(w.iterations == 3);
    for (double ratio : {1.5, 3.0}) {
      CAPTURE(model);
      CAPTURE(ratio);
      ReplayReport report;
      report.trace = "generated";
      report.kernels = w.kernels.size();
      report.iterations = w.iterations;
      report.footprint_bytes = w.footprint_bytes();
      report.machine = MachineModel::h200();
      const auto capacity = static_cast<std::uint64_t>(static_cast<double>(w.block_count()) / ratio) + 1;
      report.machine.capacity_bytes = capacity * core::kBlockBytes;
      report.capacity_bytes = report.machine.capacity_bytes;
      report.compute_ns = w.compute_ns();
      report.results.push_back(run(w, report.machine, "reactive", 0));
      report.results.push_back(simulate_oracle(w, report.machine));
      const SimStats& reactive = report.results[0].stats;
      const SimStats& oracle = report.results[1].stats;
      const std::uint64_t floor = *floor_ns(report);
      CHECK(floor >= report.compute_ns);
      CHECK(floor <= oracle.total_ns);
      CHECK(oracle.total_ns <= reactive.total_ns);
      CHECK(oracle.h2d_bytes <= reactive.h2d_bytes);
      CHECK(reactive.compute_ns == oracle.compute_ns);
      CHECK(reactive.total_ns == reactive.compute_ns + reactive.stall_ns);

      ReplayReport again = report;
      again.results.clear();
      again.results.push_back(run(w, again.machine, "reactive", 0));
      again.results.push_back(simulate_oracle(w, again.machine));
      CHECK(format_json(report) == format_json(again));
      CHECK(format_text(report) == format_text(again));
    }
  }
}

TEST_CASE("sim: a damaged trace gets the reader's error") {
  TempFile file("sim_truncated");
  GeneratorOptions options;
  options.iterations = 1;
  REQUIRE(generate_trace_file(options, file.str()).ok());
  const auto size = std::filesystem::file_size(file.path);
  std::filesystem::resize_file(file.path, size - 30);
  const WorkloadLoad load = load_workload(file.str());
  CHECK_FALSE(load.ok());
  CHECK(load.error.starts_with(file.str() + ": truncated: "));
  const WorkloadLoad missing = load_workload("/nonexistent/trace.dtrace");
  CHECK_FALSE(missing.ok());
  CHECK(missing.error.find("/nonexistent/trace.dtrace") != std::string::npos);
  TempFile garbage("sim_garbage");
  std::ofstream(garbage.path, std::ios::binary) << "not a trace at all";
  const WorkloadLoad bad = load_workload(garbage.str());
  CHECK(bad.error.find("not a deepum trace") != std::string::npos);
}

TEST_CASE("sim workload: a pointer touches its tensor, up to the next pointer or its range's end") {
  // One 8 MiB range at A (four blocks); pointers at A and A + 5 MiB, and one outside every range.
  const std::uint64_t kMiB = std::uint64_t{1} << 20;
  const std::vector<Kernel> kernels{
      {1'000'000, 1'000, {}, {kA}},
      {2'000'000, 1'000, {}, {kA + 5 * kMiB}},
      {3'000'000, 1'000, {}, {kB}},
  };
  const std::vector<core::RangeEvent> ranges{{core::RangeEvent::Kind::allocated, 10, kA, 8 * kMiB}};
  const Workload w = workload_of(kernels, {}, ranges);
  REQUIRE(w.block_count() == 5);
  CHECK(blocks(w, 0) == std::vector<BlockIndex>{0, 1, 2});  // [A, A + 5 MiB)
  CHECK(blocks(w, 1) == std::vector<BlockIndex>{2, 3});     // [A + 5 MiB, A + 8 MiB)
  CHECK(blocks(w, 2) == std::vector<BlockIndex>{4});
  CHECK(w.stats.extent_blocks == 2);
  // The planner still gets the pointers' own blocks only.
  CHECK(std::vector<BlockIndex>(w.pointers_of(1).begin(), w.pointers_of(1).end()) ==
        std::vector<BlockIndex>{2});

  WorkloadOptions own_block;
  own_block.pointer_extents = false;
  const Workload narrow = workload_of(kernels, own_block, ranges);
  REQUIRE(narrow.block_count() == 3);
  CHECK(blocks(narrow, 0) == std::vector<BlockIndex>{0});
  CHECK(blocks(narrow, 1) == std::vector<BlockIndex>{1});
  CHECK(narrow.stats.extent_blocks == 0);
}

TEST_CASE("sim workload: iterations start where a once-per-iteration function runs") {
  const auto workload = [](std::vector<std::uint64_t> functions, std::vector<std::uint64_t> keys) {
    Workload w;
    for (std::size_t i = 0; i < functions.size(); ++i) {
      KernelStep step;
      step.execution_key = keys[i];
      step.function = functions[i];
      w.kernels.push_back(step);
    }
    w.iterations = detect_iterations(w.kernels);
    return w;
  };
  // Periodic keys: multiples of the period.
  CHECK(iteration_starts(workload({1, 2, 1, 2, 1, 2}, {5, 6, 5, 6, 5, 6}), 3) ==
        std::vector<std::uint32_t>{0, 2, 4});
  // Keys that do not repeat (new addresses each iteration) after a set-up whose function 9 runs
  // twice as well, back to back: function 1 runs twice, farther apart, and marks the iterations.
  const Workload w = workload({9, 9, 1, 2, 3, 1, 2, 3}, {11, 12, 13, 14, 15, 16, 17, 18});
  CHECK(w.iterations == 1);
  CHECK(iteration_starts(w, 2) == std::vector<std::uint32_t>{0, 5});
  CHECK(iteration_starts(w, 1) == std::vector<std::uint32_t>{0});
  CHECK(iteration_starts(w, 4).empty());  // no function runs four times
}

TEST_CASE("sim replay: statistics of a measured window after warm-up") {
  // Two iterations of the same two kernels: the first populates A and B, the second runs fault-free.
  const Workload w = workload_of({
      {1'000'000, 1'000, {kA}, {}, 1},
      {2'000'000, 2'000, {kB}, {}, 2},
      {3'000'000, 1'000, {}, {}, 1},
      {4'000'000, 2'000, {}, {}, 2},
  });
  REQUIRE(w.iterations == 2);
  const std::vector<std::uint32_t> starts = iteration_starts(w, 2);
  REQUIRE(starts == std::vector<std::uint32_t>{0, 2});
  auto policy = make_policy("reactive");
  RunOptions options;
  options.capacity_blocks = 4;
  options.window_start = starts[1];
  const SimResult r = simulate(w, MachineModel::h200(), *policy, options);
  CHECK(r.before_window.total_ns == 2 * 27'000 + 3'000);
  CHECK(r.before_window.faults == 2);
  const SimStats window = stats_between(r.before_window, r.stats);
  CHECK(window.total_ns == 3'000);
  CHECK(window.compute_ns == 3'000);
  CHECK(window.stall_ns == 0);
  CHECK(window.faults == 0);
}

TEST_CASE("sim deepum-reactive: evicts in batches with hint calls, off the fault path") {
  // 40 kernels, each touching a new block, on a GPU of 20: headroom 5 blocks (a quarter at most),
  // so past 15 blocks the 6 least recently used go in one call, down to 10.
  std::vector<Kernel> kernels;
  for (std::uint64_t i = 0; i < 40; ++i)
    kernels.push_back({1'000'000 * (i + 1), 100'000, {kA + i * kMiB2}, {}});
  const Workload w = workload_of(kernels);
  MachineModel m = MachineModel::h200();
  const SimResult batched = run(w, m, "deepum-reactive", 20);
  const SimResult reactive = run(w, m, "reactive", 20);
  CHECK(make_policy("deepum-reactive")->name() == "deepum-reactive");
  CHECK(batched.stats.driver_evictions == 0);
  CHECK(batched.stats.evict_calls == 5);  // after kernels 15, 21, 27, 33, 39
  CHECK(batched.stats.evicted_blocks == 30);
  CHECK(batched.stats.d2h_bytes == 30 * kMiB2);
  CHECK(reactive.stats.driver_evictions == 20);
  // Populating faults no longer wait for a write-back each.
  CHECK(batched.stats.stall_ns < reactive.stats.stall_ns);
}
