#include "deepum/sim/plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "deepum/sim/engine.hpp"
#include "deepum/sim/policies.hpp"

namespace deepum::sim {

namespace {
constexpr std::uint64_t kBlock = core::kBlockBytes;

// The step time with `memory` bytes of GPU memory, all of it the resident limit.
double step_ms(const Workload& workload, MachineModel machine, std::uint64_t memory, const RunOptions& run,
               std::uint32_t measured) {
  machine.capacity_bytes = std::max<std::uint64_t>(memory / kBlock, 1) * kBlock;
  const std::unique_ptr<Policy> policy = make_policy("deepum-swap", machine.capacity_bytes);
  const SimResult result = simulate(workload, machine, *policy, run);
  const SimStats window = stats_between(result.before_window, result.stats);
  return static_cast<double>(window.total_ns) / 1e6 / measured;
}

std::vector<std::uint64_t> default_points(std::uint64_t footprint) {
  std::vector<std::uint64_t> points;
  for (const double share : {0.25, 0.33, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0})
    points.push_back(static_cast<std::uint64_t>(static_cast<double>(footprint) * share));
  return points;
}
}  // namespace

MemoryPlan plan_memory(const Workload& workload, const MachineModel& machine, const PlanOptions& options) {
  if (options.warmup >= options.iterations) {
    throw std::invalid_argument("a warm-up of " + std::to_string(options.warmup) + " leaves none of the " +
                                std::to_string(options.iterations) + " iterations to measure");
  }
  RunOptions run;
  if (options.warmup > 0) {
    const std::vector<std::uint32_t> starts = iteration_starts(workload, options.iterations);
    if (starts.empty()) {
      throw std::invalid_argument("cannot tell where its " + std::to_string(options.iterations) +
                                  " iterations start: no kernel function runs exactly that many times");
    }
    run.window_start = starts[options.warmup];
  }
  const std::uint32_t measured = options.iterations - options.warmup;
  MemoryPlan plan;
  plan.footprint_bytes = workload.footprint_bytes();
  plan.full_step_ms = step_ms(workload, machine, plan.footprint_bytes, run, measured);
  std::vector<std::uint64_t> memory =
      options.memory_bytes.empty() ? default_points(plan.footprint_bytes) : options.memory_bytes;
  std::sort(memory.begin(), memory.end());
  memory.erase(std::unique(memory.begin(), memory.end()), memory.end());
  for (const std::uint64_t bytes : memory) {
    // Below two blocks nothing can run (a kernel names at least one, and one is being evicted).
    if (bytes < 2 * kBlock) continue;
    PlanPoint point{bytes, plan.full_step_ms, {}};
    if (bytes < plan.footprint_bytes) {
      try {
        point.step_ms = step_ms(workload, machine, bytes, run, measured);
      } catch (const std::logic_error& e) {  // the engine's: a kernel names more than the GPU holds
        point.step_ms.reset();
        point.why = e.what();
      }
    }
    if (!plan.smallest_within && point.step_ms && *point.step_ms <= options.within * plan.full_step_ms)
      plan.smallest_within = bytes;
    plan.points.push_back(std::move(point));
  }
  return plan;
}

}  // namespace deepum::sim
