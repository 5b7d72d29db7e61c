// The synthetic traces: a transformer's, a real .dtrace with the kernel count the model implies,
// faults in the first iteration only, and iterations the replay finds again; and a plain loop
// sweeping arrays, on which a learned loop's victims beat the least recently named.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "deepum/core/trace_file.hpp"
#include "deepum/sim/engine.hpp"
#include "deepum/sim/generator.hpp"
#include "deepum/sim/machine_model.hpp"
#include "deepum/sim/policies.hpp"
#include "deepum/sim/workload.hpp"
#include "temp_file.hpp"

using namespace deepum;
using namespace deepum::sim;

namespace {

// forward: embedding, 10 per layer, final norm, head, loss; backward: 3 for the head, 12 per layer,
// embedding; Adam: one per parameter tensor (6 per layer, embedding, final norm, positions or head).
std::uint64_t expected_kernels_per_iteration(const ModelShape& m) {
  return 1 + 10 * std::uint64_t{m.layers} + 3 + 3 + 12 * std::uint64_t{m.layers} + 1 +
         6 * std::uint64_t{m.layers} + 3;
}
}  // namespace

TEST_CASE("sim generator: models") {
  for (const std::string& name : model_names()) {
    const auto shape = model_shape(name);
    REQUIRE(shape.has_value());
    CHECK(shape->layers > 0);
  }
  CHECK_FALSE(model_shape("gpt5").has_value());
}

TEST_CASE("sim generator: the trace reads back with the expected kernels") {
  TempFile file("sim_generator");
  GeneratorOptions options;
  options.model = "tiny";
  options.batch = 2;
  options.seq = 64;
  options.iterations = 3;
  const GeneratorResult result = generate_trace_file(options, file.str());
  REQUIRE_MESSAGE(result.ok(), result.error);
  const ModelShape shape = *model_shape("tiny");
  CHECK(result.kernels_per_iteration == expected_kernels_per_iteration(shape));
  CHECK(result.kernels == 3 * result.kernels_per_iteration);
  // Parameters: embedding, positions, per layer 2 norms + QKV + O + two FFN matrices, final norm.
  const std::uint64_t d = shape.hidden, f = shape.ffn;
  CHECK(result.parameters ==
        shape.vocab * d + shape.max_seq * d + shape.layers * (2 * d + 3 * d * d + d * d + 2 * d * f) + d);

  const core::TraceReadResult read = core::read_trace(file.str());
  REQUIRE_MESSAGE(read.trace.has_value(), read.error);
  const core::Trace& trace = *read.trace;
  CHECK(trace.launches.size() == result.kernels);
  CHECK(trace.executions.size() == result.kernels);
  CHECK(trace.faults.size() == result.faults);
  CHECK(trace.ranges.size() == 6);
  CHECK(trace.header.metadata.at("sim_model") == "tiny");
  CHECK(trace.function_names.size() == 14);
  // Faults come only during the first iteration.
  const core::Timestamp second_iteration = trace.executions[result.kernels_per_iteration].start;
  for (const auto& fault : trace.faults) CHECK(fault.start < second_iteration);
  // Executions on one stream, one after another.
  for (std::size_t i = 1; i < trace.executions.size(); ++i) {
    CHECK(trace.executions[i].start > trace.executions[i - 1].end);
  }

  const WorkloadLoad load = build_workload(trace);
  REQUIRE_MESSAGE(load.ok(), load.error);
  const Workload& w = load.workload;
  CHECK(w.kernels.size() == result.kernels);
  CHECK(w.iterations == 3);
  CHECK(w.stats.faults_attributed == result.faults);
  CHECK(w.stats.faults_unattributed == 0);
  // Every kernel touches memory, the same blocks in every iteration.
  for (std::size_t k = 0; k < result.kernels_per_iteration; ++k) {
    CHECK_FALSE(w.blocks_of(k).empty());
    CHECK(w.kernels[k].touch_set == w.kernels[k + 2 * result.kernels_per_iteration].touch_set);
    CHECK(w.kernels[k].compute_ns >= 4'000);
  }
}

TEST_CASE("sim generator: bad options") {
  std::ostringstream sink;  // outlives the writer, which finishes into it when destroyed
  core::TraceWriter writer;
  REQUIRE(writer.open(sink));
  GeneratorOptions options;
  options.model = "gpt5";
  CHECK(generate_trace(options, writer).error == "unknown model 'gpt5'");
  options.model = "tiny";
  options.batch = 0;
  CHECK_FALSE(generate_trace(options, writer).ok());
}

TEST_CASE("sim generator: the sweep, whose learned loop moves less than least recently named victims") {
  TempFile file("sim_sweep");
  GeneratorOptions options;
  options.model = "sweep";
  options.arrays = 8;
  options.mib = 16;  // eight blocks each
  options.iterations = 5;
  const GeneratorResult result = generate_trace_file(options, file.str());
  REQUIRE_MESSAGE(result.ok(), result.error);
  // Per array: the update, the sum, the copy of the sums to the host.
  CHECK(result.kernels_per_iteration == 3 * options.arrays);
  CHECK(result.kernels == options.iterations * result.kernels_per_iteration);
  const std::uint64_t array_bytes = options.mib << 20;
  CHECK(result.footprint_bytes == options.arrays * array_bytes + core::kBlockBytes);

  const WorkloadLoad load = load_workload(file.str());
  REQUIRE_MESSAGE(load.ok(), load.error);
  const Workload& w = load.workload;
  CHECK(w.kernels.size() == result.kernels);
  CHECK(w.kernels[2].copies_to_host());
  CHECK_FALSE(w.kernels[0].copies_to_host());

  // Half the arrays fit: from the second iteration on, each brings back at least the other half.
  const std::uint64_t limit = options.arrays * array_bytes / 2;
  const auto moved_in = [&](const char* name) {
    const std::unique_ptr<Policy> policy = make_policy(name, limit);
    REQUIRE(policy != nullptr);
    const SimResult r = simulate(w, MachineModel::h200(), *policy);
    CHECK(r.stats.faults == 0);
    return r.stats.h2d_bytes;
  };
  const std::uint64_t by_next_use = moved_in("deepum-swap");
  const std::uint64_t least_recent = moved_in("deepum-swap-lru");
  CHECK(by_next_use >= (options.iterations - 1) * (options.arrays * array_bytes - limit));
  CHECK(by_next_use < least_recent);
}

TEST_CASE("sim generator: a sweep needs two arrays") {
  std::ostringstream sink;
  core::TraceWriter writer;
  REQUIRE(writer.open(sink));
  GeneratorOptions options;
  options.model = "sweep";
  options.arrays = 1;
  CHECK_FALSE(generate_trace(options, writer).ok());
}
