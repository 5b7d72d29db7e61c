// The simulator's launch-ordered policies (OrderedPolicy: the library's LaunchOrderedResidency
// replayed from a trace's launch operands and allocator buffers): host events land before the
// right operation, the limit is held by evictions, swapping replaces the faults back with copies,
// victims by the trace's true next use (-oracle) move less where no loop is learned, and a trace
// without operands is refused.
#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "deepum/sim/engine.hpp"
#include "deepum/sim/ordered_policy.hpp"
#include "deepum/sim/plan.hpp"
#include "deepum/sim/policies.hpp"
#include "deepum/sim/workload.hpp"

using namespace deepum;
using namespace deepum::sim;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kTensor = 8 * kMiB;  // four 2 MB blocks
constexpr std::uint64_t kStepNs = 2'000'000;
constexpr std::uint64_t kKernelNs = 1'000'000;
const std::uint64_t kRanges[] = {std::uint64_t{1} << 30, std::uint64_t{2} << 30, std::uint64_t{3} << 30};

// `iterations` times: three kernels, each naming one whole 8 MiB range (A, B, C), 1 ms each, 2 ms
// apart, in one stream, launched `host_gap` apart by the program's thread; with `operands`, the
// trace has each launch's operands (format 1.4).
constexpr std::uint64_t kFastHostNs = 10'000;
WorkloadBuilder training_loop(int iterations, bool operands, std::uint64_t host_gap = kFastHostNs) {
  WorkloadBuilder builder;
  for (std::uint64_t address : kRanges)
    builder.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 1, address, kTensor});
  for (int i = 0; i < 3 * iterations; ++i) {
    const std::uint64_t at = static_cast<std::uint64_t>(i + 1) * kStepNs;
    core::KernelLaunch launch;
    launch.correlation_id = 100 + static_cast<std::uint64_t>(i);
    launch.execution_key = static_cast<std::uint64_t>(i % 3) + 1;
    launch.function = launch.execution_key;
    launch.host_time = static_cast<std::uint64_t>(i + 1) * host_gap;
    launch.pointer_count = 1;
    launch.pointers[0] = kRanges[i % 3];
    builder.add(launch);
    if (operands)
      builder.add(core::LaunchOperands{launch.correlation_id, true, false, {kRanges[i % 3]}, {kTensor}});
    core::KernelExecution execution;
    execution.correlation_id = launch.correlation_id;
    execution.start = at;
    execution.end = at + kKernelNs;
    builder.add(execution);
  }
  return builder;
}

SimResult replay(const Workload& w, const std::string& policy, std::uint64_t limit) {
  std::unique_ptr<Policy> p = make_policy(policy, limit);
  REQUIRE(p != nullptr);
  return simulate(w, MachineModel::h200(), *p);
}

}  // namespace

TEST_CASE("host events land before the first operation the host issued after them") {
  WorkloadBuilder builder = training_loop(1, true);
  // Between the second launch (host time 20 us) and the third (30 us): before kernel 2.
  builder.add(core::BufferEvent{core::BufferEvent::Kind::returned, 25'000, kRanges[0], kTensor, 7});
  // After every launch: never applied (before kernel 3, one past the last).
  builder.add(core::BufferEvent{core::BufferEvent::Kind::handed_out, 10 * kStepNs, kRanges[1], kTensor, 0});
  const Workload w = builder.finish();
  REQUIRE(w.operands.size() == 3);
  CHECK(w.stats.steps_with_operands == 3);
  CHECK(w.operands[1].known);
  CHECK(w.operand_addresses[w.operands[1].first] == kRanges[1]);
  CHECK(w.operand_extents[w.operands[1].first] == kTensor);
  // Three ranges allocated before kernel 0, then the two buffer events.
  REQUIRE(w.host_events.size() == 5);
  CHECK(w.host_events[0].kind == HostEvent::Kind::range_allocated);
  CHECK(w.host_events[0].before_kernel == 0);
  CHECK(w.host_events[3].kind == HostEvent::Kind::buffer_returned);
  CHECK(w.host_events[3].before_kernel == 2);
  CHECK(w.host_events[3].stream == 7);
  CHECK(w.host_events[4].kind == HostEvent::Kind::buffer_handed_out);
  CHECK(w.host_events[4].before_kernel == 3);
  // Every block of each named tensor is touched (the operands' extents), not only the pointer's.
  CHECK(w.block_count() == 12);
  CHECK(w.blocks_of(0).size() == 4);
}

TEST_CASE("pointers of unknown size get the live buffer's; a stale one touches its own block") {
  // A trace recorded without a resident limit: buffer events, but every extent 0.
  WorkloadBuilder builder;
  const std::uint64_t a = kRanges[0];
  builder.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 1, a, 32 * kMiB});
  builder.add(core::BufferEvent{core::BufferEvent::Kind::handed_out, 2, a, kTensor, 0});
  builder.add(core::BufferEvent{core::BufferEvent::Kind::handed_out, 2, a + kTensor, kTensor, 0});
  builder.add(core::BufferEvent{core::BufferEvent::Kind::returned, 5'000, a + kTensor, kTensor, 7});
  core::KernelLaunch launch;
  launch.correlation_id = 100;
  launch.execution_key = launch.function = 1;
  launch.host_time = 10'000;
  launch.pointer_count = 2;
  launch.pointers[0] = a + kMiB;                // inside the live buffer: 7 MiB to its end
  launch.pointers[1] = a + kTensor + 3 * kMiB;  // in the returned one: a stale word
  builder.add(launch);
  builder.add(core::LaunchOperands{
      launch.correlation_id, true, false, {launch.pointers[0], launch.pointers[1]}, {0, 0}});
  core::KernelExecution execution;
  execution.correlation_id = launch.correlation_id;
  execution.start = kStepNs;
  execution.end = kStepNs + kKernelNs;
  builder.add(execution);
  const Workload w = builder.finish();
  REQUIRE(w.operands.size() == 1);
  CHECK(w.operand_extents[w.operands[0].first] == 7 * kMiB);
  CHECK(w.operand_extents[w.operands[0].first + 1] == 0);
  // The live tensor's four blocks and the stale word's own block, not the rest of the range.
  CHECK(w.blocks_of(0).size() == 5);
}

TEST_CASE("the ordered policies hold the limit; swapping replaces faults back with copies") {
  const Workload w = training_loop(4, true).finish();
  const std::uint64_t limit = 16 * kMiB;  // two of the three tensors

  const SimResult everything = replay(w, "deepum-ordered", 0);  // the whole GPU: nothing moves
  CHECK(everything.stats.d2h_bytes == 0);
  CHECK(everything.stats.stall_ns < kKernelNs);

  std::unique_ptr<Policy> ordered_policy = make_policy("deepum-ordered", limit);
  const SimResult ordered = simulate(w, MachineModel::h200(), *ordered_policy);
  const auto& ordered_model = dynamic_cast<OrderedPolicy&>(*ordered_policy).model_stats();
  CHECK(ordered_model.evictions > 0);
  CHECK(ordered_model.peak_bytes <= limit + kTensor);
  CHECK(ordered_model.swapped_out_bytes == 0);
  CHECK(ordered.stats.d2h_bytes > 0);
  CHECK(ordered.stats.faults > 12);  // the evicted tensors fault back in every iteration
  CHECK(ordered.detail.find("swap off") != std::string::npos);

  std::unique_ptr<Policy> swap_policy = make_policy("deepum-swap", limit);
  const SimResult swapped = simulate(w, MachineModel::h200(), *swap_policy);
  const auto& swap_model = dynamic_cast<OrderedPolicy&>(*swap_policy).model_stats();
  CHECK(swap_model.swapped_out_bytes > 0);
  CHECK(swap_model.restored_bytes > 0);
  CHECK(swapped.stats.faults == 0);  // every tensor was fetched, placed or copied back first
  CHECK(swapped.stats.d2h_bytes == swap_model.swapped_out_bytes);
  CHECK(swapped.stats.total_ns < ordered.stats.total_ns);
  CHECK(swapped.stats.total_ns >= w.compute_ns());
  CHECK(swapped.detail.find("swap on") != std::string::npos);

  // Deterministic.
  CHECK(replay(w, "deepum-swap", limit).stats.total_ns == swapped.stats.total_ns);
}

TEST_CASE("-oracle: victims by the trace's true next use, where the engine has learned no loop") {
  // Four iterations are too few to learn the loop: deepum-swap takes its victims least recently
  // named, in a cycle of three tensors with room for two the one needed next. The trace's next
  // uses keep that one and let the other go.
  const Workload w = training_loop(4, true).finish();
  const std::uint64_t limit = 16 * kMiB;
  std::unique_ptr<Policy> oracle_policy = make_policy("deepum-swap-oracle", limit);
  REQUIRE(oracle_policy != nullptr);
  CHECK(oracle_policy->name() == "deepum-swap-oracle");
  const SimResult oracle = simulate(w, MachineModel::h200(), *oracle_policy);
  const auto& oracle_model = dynamic_cast<OrderedPolicy&>(*oracle_policy).model_stats();
  const SimResult learned = replay(w, "deepum-swap", limit);
  CHECK(oracle_model.peak_bytes <= limit + kTensor);
  CHECK(oracle.stats.faults == 0);
  CHECK(oracle.stats.d2h_bytes > 0);
  CHECK(oracle.stats.d2h_bytes < learned.stats.d2h_bytes);
  CHECK(oracle.stats.h2d_bytes < learned.stats.h2d_bytes);
  CHECK(make_policy("deepum-swap-lru-oracle", limit) == nullptr);
  CHECK(make_policy("reactive-oracle", limit) == nullptr);
}

TEST_CASE("operations are decided in launch order, with their shapes, as the library decides them") {
  // Steps of 300 launches, each of its own grid (one function), naming tensors A, B, C in turn at
  // an offset that moves every step (no loop of addresses). Every other step, each pair of
  // launches ran in the other order (two streams): in the order they ran, no step repeats the one
  // before; in launch order, each does.
  constexpr std::uint64_t kSteps = 6, kStepLaunches = 300;
  WorkloadBuilder builder;
  for (std::uint64_t address : kRanges)
    builder.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 1, address, kTensor});
  std::uint64_t correlation = 100;
  for (std::uint64_t step = 0; step < kSteps; ++step) {
    for (std::uint64_t i = 0; i < kStepLaunches; ++i) {
      core::KernelLaunch launch;
      launch.correlation_id = ++correlation;
      launch.execution_key = correlation;
      launch.function = 1;
      launch.grid = {static_cast<std::uint32_t>(i + 1), 1, 1};
      launch.host_time = correlation * kFastHostNs;
      launch.pointer_count = 1;
      launch.pointers[0] = kRanges[i % 3] + 4096 * step;
      builder.add(launch);
      builder.add(
          core::LaunchOperands{correlation, true, false, {launch.pointers[0]}, {kTensor - 4096 * step}});
      const std::uint64_t slot = step % 2 == 1 ? i ^ 1 : i;  // the position it ran at
      core::KernelExecution execution;
      execution.correlation_id = correlation;
      execution.start = (step * kStepLaunches + slot + 1) * kStepNs;
      execution.end = execution.start + kKernelNs;
      builder.add(execution);
    }
  }
  const Workload w = builder.finish();
  REQUIRE(w.kernels.size() == kSteps * kStepLaunches);
  CHECK(w.kernels[kStepLaunches].correlation_id < w.kernels[kStepLaunches + 1].correlation_id);
  CHECK(w.kernels[1].grid[0] == 2);
  std::unique_ptr<Policy> policy = make_policy("deepum-ordered", 2 * kTensor);
  simulate(w, MachineModel::h200(), *policy);
  const auto& model = dynamic_cast<OrderedPolicy&>(*policy).model_stats();
  CHECK(model.loop_period == 0);
  CHECK(model.shape_loop_period == kStepLaunches);
  CHECK(model.planning_period == kStepLaunches);
}

TEST_CASE("the program's thread held by a swap delays the launches behind it") {
  const Workload w = training_loop(4, true).finish();
  MachineModel machine = MachineModel::h200();
  machine.copy_d2h_gb_per_s = 0.5;             // 16 ms per tensor: far longer than a kernel
  machine.swap_room_waits_for_copies = false;  // the hold alone
  machine.place_holds_thread = false;
  std::unique_ptr<Policy> queued = make_policy("deepum-swap", 16 * kMiB);
  const SimResult free_thread = simulate(w, machine, *queued);
  machine.swap_holds_thread = true;
  std::unique_ptr<Policy> held = make_policy("deepum-swap", 16 * kMiB);
  const SimResult held_thread = simulate(w, machine, *held);
  CHECK(held_thread.stats.total_ns > free_thread.stats.total_ns);
}

TEST_CASE("a placement held until it has run behind its stream's copies back delays the launches behind it") {
  const Workload w = training_loop(4, true).finish();
  MachineModel machine = MachineModel::h200();
  machine.copy_h2d_gb_per_s = machine.copy_d2h_gb_per_s = 0.5;  // 16 ms per tensor: longer than a kernel
  machine.swap_room_waits_for_copies = false;
  machine.place_holds_thread = false;
  const SimResult returns_at_once = simulate(w, machine, *make_policy("deepum-swap", 16 * kMiB));
  machine.place_holds_thread = true;
  const SimResult held = simulate(w, machine, *make_policy("deepum-swap", 16 * kMiB));
  CHECK(held.stats.total_ns > returns_at_once.stats.total_ns);
  // The same moves either way: only the thread's time differs.
  CHECK(held.stats.h2d_bytes == returns_at_once.stats.h2d_bytes);
  CHECK(held.stats.d2h_bytes == returns_at_once.stats.d2h_bytes);
}

TEST_CASE("what needs a swap's room waits on the program's thread until the swap is issued") {
  const Workload w = training_loop(4, true).finish();
  MachineModel machine = MachineModel::h200();
  REQUIRE(machine.swap_room_waits_for_copies);
  machine.copy_d2h_gb_per_s = 0.5;  // 16 ms per tensor: far longer than a kernel
  std::unique_ptr<Policy> waiting = make_policy("deepum-swap", 16 * kMiB);
  const SimResult waited = simulate(w, machine, *waiting);
  machine.swap_room_waits_for_copies = false;
  std::unique_ptr<Policy> queued = make_policy("deepum-swap", 16 * kMiB);
  const SimResult free_thread = simulate(w, machine, *queued);
  CHECK(dynamic_cast<OrderedPolicy&>(*waiting).model_stats().swapped_out_bytes > 0);
  CHECK(waited.stats.total_ns > free_thread.stats.total_ns);
}

TEST_CASE("a swap's drop, on the eviction thread after its copies, delays what needs its room") {
  const Workload w = training_loop(4, true).finish();
  MachineModel machine = MachineModel::h200();
  const SimResult quick = simulate(w, machine, *make_policy("deepum-swap", 16 * kMiB));
  machine.discard_gb_per_s = 0.5;  // 16 ms to drop a tensor: far longer than a kernel
  std::unique_ptr<Policy> slow_policy = make_policy("deepum-swap", 16 * kMiB);
  const SimResult slow = simulate(w, machine, *slow_policy);
  REQUIRE(dynamic_cast<OrderedPolicy&>(*slow_policy).model_stats().swapped_out_bytes > 0);
  CHECK(slow.stats.total_ns > quick.stats.total_ns + 16'000'000);
  // The same moves either way: only when the room is free differs.
  CHECK(slow.stats.d2h_bytes == quick.stats.d2h_bytes);
  CHECK(slow.stats.h2d_bytes == quick.stats.h2d_bytes);
}

TEST_CASE("swap copies that take turns, out and back, make a swapping loop slower") {
  // Eight 8 MiB tensors named in a loop under a 32 MiB limit: once the loop is learned, tensors
  // come back ahead while others are copied out. Slow copies (16 ms a tensor) set the pace.
  constexpr std::uint64_t kTensors = 8;
  WorkloadBuilder builder;
  for (std::uint64_t t = 0; t < kTensors; ++t)
    builder.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 1, kRanges[0] + t * kTensor, kTensor});
  for (std::uint64_t i = 0; i < 6 * kTensors; ++i) {
    core::KernelLaunch launch;
    launch.correlation_id = 100 + i;
    launch.execution_key = launch.function = i % kTensors + 1;
    launch.host_time = (i + 1) * kFastHostNs;
    launch.pointer_count = 1;
    launch.pointers[0] = kRanges[0] + (i % kTensors) * kTensor;
    builder.add(launch);
    builder.add(core::LaunchOperands{launch.correlation_id, true, false, {launch.pointers[0]}, {kTensor}});
    builder.add(core::KernelExecution{.correlation_id = launch.correlation_id,
                                      .start = (i + 1) * kStepNs,
                                      .end = (i + 1) * kStepNs + kKernelNs});
  }
  const Workload w = builder.finish();
  MachineModel machine = MachineModel::h200();
  machine.copy_d2h_gb_per_s = machine.copy_h2d_gb_per_s = 0.5;
  std::unique_ptr<Policy> overlapping = make_policy("deepum-swap", 4 * kTensor);
  const SimResult both_ways = simulate(w, machine, *overlapping);
  machine.copies_overlap = false;
  std::unique_ptr<Policy> taking_turns = make_policy("deepum-swap", 4 * kTensor);
  const SimResult turns = simulate(w, machine, *taking_turns);
  CHECK(both_ways.stats.h2d_bytes > 0);
  CHECK(turns.stats.h2d_bytes == both_ways.stats.h2d_bytes);
  CHECK(turns.stats.total_ns > both_ways.stats.total_ns);
}

TEST_CASE("a program thread slower than the GPU sets the pace: the traced host gaps are replayed") {
  const Workload fast = training_loop(4, true).finish();
  const Workload slow = training_loop(4, true, 3 * kKernelNs).finish();
  CHECK(slow.kernels[1].host_gap_ns == 3 * kKernelNs);
  const SimResult gpu_bound = replay(fast, "deepum-ordered", 0);
  const SimResult host_bound = replay(slow, "deepum-ordered", 0);
  CHECK(gpu_bound.stats.total_ns < 12 * kKernelNs + kKernelNs);
  // Twelve launches 3 ms apart: the last starts 33 ms after the first.
  CHECK(host_bound.stats.total_ns >= 11 * 3 * kKernelNs + kKernelNs);
  CHECK(host_bound.stats.d2h_bytes == 0);
}

TEST_CASE("the ordered policies refuse a trace without launch operands") {
  const Workload w = training_loop(2, false).finish();
  CHECK(w.operands.empty());
  std::unique_ptr<Policy> policy = make_policy("deepum-swap", 16 * kMiB);
  CHECK_THROWS_WITH_AS(simulate(w, MachineModel::h200(), *policy), doctest::Contains("trace format 1.4"),
                       std::invalid_argument);
}

TEST_CASE("plan: the step at each amount of GPU memory, through the library's engine") {
  const Workload w = training_loop(6, true).finish();  // three 8 MiB tensors a step
  PlanOptions options;
  options.iterations = 6;
  options.warmup = 1;
  options.memory_bytes = {24 * kMiB, 4 * kMiB, 16 * kMiB};
  options.within = 1.5;
  const MemoryPlan plan = plan_memory(w, MachineModel::h200(), options);
  CHECK(plan.footprint_bytes == 24 * kMiB);
  REQUIRE(plan.points.size() == 3);
  // Ascending; a kernel naming 8 MiB cannot run in 4, and says why.
  CHECK(plan.points[0].memory_bytes == 4 * kMiB);
  CHECK_FALSE(plan.points[0].step_ms.has_value());
  CHECK(plan.points[0].why.find("kernel") != std::string::npos);
  // Two of the three tensors on the GPU: one moves each way every kernel, the step grows.
  REQUIRE(plan.points[1].step_ms.has_value());
  CHECK(*plan.points[1].step_ms > plan.full_step_ms);
  // All of it: the step with nothing moving, which a step's compute bounds from below.
  REQUIRE(plan.points[2].step_ms.has_value());
  CHECK(*plan.points[2].step_ms == plan.full_step_ms);
  CHECK(plan.full_step_ms * 1e6 >= static_cast<double>(3 * kKernelNs));
  // The answer: the least memory within the factor.
  const double slowdown = *plan.points[1].step_ms / plan.full_step_ms;
  CHECK(plan.smallest_within == (slowdown <= 1.5 ? 16 * kMiB : 24 * kMiB));
  options.within = slowdown + 0.01;
  CHECK(plan_memory(w, MachineModel::h200(), options).smallest_within == 16 * kMiB);
  // A warm-up that leaves nothing to measure is refused.
  options.warmup = 6;
  CHECK_THROWS_AS(plan_memory(w, MachineModel::h200(), options), std::invalid_argument);
}
