// What-if for GPU memory: how long a traced step would take with N bytes of GPU memory, for a
// range of N, replayed through the engine the library runs (OrderedPolicy, core's
// LaunchOrderedResidency, with `mode: fast`'s moves), and the smallest N that keeps the step
// within a factor of the step with all of it on the GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deepum/sim/machine_model.hpp"
#include "deepum/sim/workload.hpp"

namespace deepum::sim {

struct PlanOptions {
  // GPU memory to try, in bytes; empty: the footprint times 1, 0.9, 0.8, ... 0.25.
  std::vector<std::uint64_t> memory_bytes;
  std::uint32_t iterations = 1;  // in the trace
  std::uint32_t warmup = 0;      // replayed first, not measured
  double within = 1.5;           // the slowdown the answer may cost
};

struct PlanPoint {
  std::uint64_t memory_bytes = 0;
  std::optional<double> step_ms;  // unset: the step cannot run in that memory
  std::string why;                // ... and why (a kernel names more than it holds)
};

struct MemoryPlan {
  std::uint64_t footprint_bytes = 0;
  double full_step_ms = 0;        // with the whole footprint on the GPU: nothing moves
  std::vector<PlanPoint> points;  // ascending memory
  // The least memory tried whose step stays within options.within of full_step_ms.
  std::optional<std::uint64_t> smallest_within;
};

// Throws std::invalid_argument where the trace cannot be replayed by the engine (no operands:
// a trace older than format 1.4) or the warm-up leaves nothing to measure.
MemoryPlan plan_memory(const Workload& workload, const MachineModel& machine, const PlanOptions& options);

}  // namespace deepum::sim
