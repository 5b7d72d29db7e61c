// Bad input to the simulator's readers: machine-model figures past a double's range or outside
// what a machine can have, machine files that are not files, and traces whose ranges, operands or
// execution times claim more than a replay can hold. Each ends in a message naming the problem,
// quickly and in bounded memory.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "deepum/core/fault_attribution.hpp"
#include "deepum/core/trace_file.hpp"
#include "deepum/sim/machine_model.hpp"
#include "deepum/sim/workload.hpp"
#include "temp_file.hpp"

using namespace deepum;
using namespace deepum::sim;

namespace {

constexpr std::uint64_t kBase = 0x7000'0000'0000ull;

std::string machine_error(const std::string& text) {
  const MachineLoad load = parse_machine_model(text, "machine.json");
  CHECK_FALSE(load.model.has_value());
  return load.error;
}

core::KernelExecution kernel(std::uint64_t correlation, core::Timestamp start, core::Timestamp end) {
  return core::KernelExecution{correlation, start, end, 1, 0, core::GpuOperation::kernel, 0, 0};
}

}  // namespace

TEST_CASE("sim machine: numbers past a double's range or a machine's are errors naming the key") {
  CHECK(machine_error(R"({"fault_us": 1E400})") ==
        "machine.json: not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1E400'");
  CHECK(
      machine_error(R"({"prefetch_h2d_gb_per_s": 1e-300})") ==
      "machine.json: key 'prefetch_h2d_gb_per_s': expected a finite rate of at least 0.001 GB/s, got 1e-300");
  CHECK(machine_error(R"({"launch_us": 2e6})") ==
        "machine.json: key 'launch_us': expected 0 to 1000000 us, got 2000000.0");
  CHECK(machine_error(R"({"capacity_bytes": 18446744073709551615})") ==
        "machine.json: key 'capacity_bytes': 18446744073709551615 bytes is more than any address space holds "
        "(2^57 bytes)");
  // The largest figures allowed still give finite simulated times.
  const MachineLoad edge = parse_machine_model(
      R"({"prefetch_h2d_gb_per_s": 0.001, "prefetch_h2d_call_us": 1000000, "capacity_bytes": "64TiB"})",
      "edge.json");
  REQUIRE_MESSAGE(edge.model.has_value(), edge.error);
  CHECK(transfer_ns(std::uint64_t{1} << 40, edge.model->prefetch_h2d_gb_per_s) == 1'099'511'627'776'000ull);
  CHECK(us_to_ns(edge.model->prefetch_h2d_call_us) == 1'000'000'000ull);
}

TEST_CASE("sim machine: transfer and host times saturate instead of overflowing") {
  CHECK(transfer_ns(UINT64_MAX, 1e-9) == UINT64_MAX);
  CHECK(us_to_ns(1e300) == UINT64_MAX);
  CHECK(us_to_ns(-5.0) == 0);
  CHECK(us_to_ns(std::numeric_limits<double>::quiet_NaN()) == 0);
}

TEST_CASE("sim machine: a machine file must be a small regular file") {
  const std::filesystem::path fifo =
      std::filesystem::temp_directory_path() / ("deepum-machine-fifo." + std::to_string(getpid()));
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(load_machine_model(fifo.string()).error == fifo.string() + ": not a regular file (a FIFO)");
  std::filesystem::remove(fifo);
  CHECK(load_machine_model("/dev/zero").error == "/dev/zero: not a regular file (a character device)");
  TempFile big("deepum-machine-big");
  std::ofstream(big.path) << "{" << std::string(2 << 20, ' ') << "}";
  CHECK(load_machine_model(big.str()).error ==
        big.str() + ": 2.00 MiB is larger than the 1.00 MiB this reader accepts");
}

TEST_CASE("sim workload: ranges live at once past the cap are refused before the replay") {
  WorkloadBuilder builder;
  builder.add(kernel(1, 1000, 2000));
  for (std::uint64_t i = 0; i < 3; ++i) {
    builder.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 100 + i, kBase + (i << 45),
                                 std::uint64_t{1} << 43});
  }
  const auto start = std::chrono::steady_clock::now();
  const Workload w = builder.finish();
  CHECK(builder.error() ==
        "its managed ranges hold 26388279066624 bytes at once (at time 102), more than the 17592186044416 a "
        "replay holds");
  CHECK(w.kernels.empty());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));

  // Freed ranges do not count, and an address allocated again replaces its range.
  WorkloadBuilder churn;
  churn.add(kernel(1, 1000, 2000));
  for (std::uint64_t i = 0; i < 100; ++i) {
    churn.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 10 * i, kBase, std::uint64_t{1} << 43});
    if (i % 2 == 0) churn.add(core::RangeEvent{core::RangeEvent::Kind::freed, 10 * i + 5, kBase, 0});
  }
  const Workload fine = churn.finish();
  CHECK(churn.error().empty());
  CHECK(fine.stats.managed_peak_bytes == std::uint64_t{1} << 43);
}

TEST_CASE("sim workload: operands naming more blocks than a replay holds are refused, not walked") {
  const auto load = [](std::uint64_t extent, std::size_t max_named_blocks) {
    std::ostringstream bytes;
    core::TraceWriter writer;
    REQUIRE(writer.open(bytes));
    core::KernelLaunch launch;
    launch.correlation_id = 7;
    launch.execution_key = 70;
    writer.write(launch);
    core::LaunchOperands operands;
    operands.correlation_id = 7;
    operands.pointers = {kBase};
    operands.extents = {extent};
    writer.write(operands);
    writer.write(kernel(7, 1000, 2000));
    REQUIRE(writer.finish());
    TempFile file("deepum-sim-operands");
    std::ofstream(file.path, std::ios::binary) << bytes.str();
    WorkloadOptions options;
    options.max_named_blocks = max_named_blocks;
    return load_workload(file.str(), options);
  };
  // 2^56 bytes: 2^35 blocks, which the workload would once have listed one by one.
  const auto start = std::chrono::steady_clock::now();
  const WorkloadLoad huge = load(std::uint64_t{1} << 56, std::size_t{1} << 26);
  CHECK(huge.error.ends_with(
      ": its operations name more than 67108864 (operation, 2 MB block) pairs, the most a replay holds; the "
      "last one counted, operation 0 (correlation id 7), names 34359738368 blocks"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK(load(10 * core::kBlockBytes, 10).ok());
  CHECK_FALSE(load(11 * core::kBlockBytes, 10).ok());
}

TEST_CASE("sim workload: faults go to the latest-started covering execution, in one pass") {
  // Against the rule written out directly, on executions of random lengths (a few very long).
  std::mt19937_64 random(21);
  constexpr core::Timestamp slack = core::FaultAttributor::kSlackNs;
  std::vector<core::KernelExecution> executions;
  core::Timestamp start = 1'000'000;
  for (std::uint64_t i = 0; i < 400; ++i) {
    start += random() % 50'000;
    const core::Timestamp length = random() % 20 == 0 ? random() % 5'000'000 : random() % 60'000;
    executions.push_back(kernel(i + 1, start, start + length));
  }
  const auto expected = [&](core::Timestamp time) -> std::optional<std::size_t> {
    std::optional<std::size_t> found;
    for (std::size_t e = 0; e < executions.size(); ++e) {
      if (executions[e].start <= time + slack && executions[e].end + slack >= time) found = e;
    }
    return found;
  };
  WorkloadOptions options;
  options.union_by_execution_key = false;
  options.pointer_extents = false;
  WorkloadBuilder builder(options);
  for (const auto& e : executions) builder.add(e);
  std::vector<std::vector<core::BlockId>> blocks_of(executions.size());
  std::uint64_t unattributed = 0;
  for (std::uint64_t f = 0; f < 3000; ++f) {
    const core::Timestamp time = 900'000 + random() % (start - 800'000);
    const std::uint64_t address = kBase + f * core::kBlockBytes;  // one block per fault
    builder.add(core::PageFault{time, time + 10, address, 1, core::FaultAccess::read, 0});
    if (const auto e = expected(time)) {
      blocks_of[*e].push_back(core::block_of(address));
    } else {
      ++unattributed;
    }
  }
  const Workload w = builder.finish();
  REQUIRE(builder.error().empty());
  CHECK(w.stats.faults_unattributed == unattributed);
  REQUIRE(w.kernels.size() == executions.size());
  for (std::size_t k = 0; k < executions.size(); ++k) {
    std::vector<core::BlockId> got;
    for (BlockIndex b : w.blocks_of(k)) got.push_back(w.block_ids[b]);
    std::sort(blocks_of[k].begin(), blocks_of[k].end());
    CHECK_MESSAGE(got == blocks_of[k], "kernel " << k);
  }
}

TEST_CASE("sim workload: an execution claiming to run for ever does not make attribution quadratic") {
  WorkloadBuilder builder;
  builder.add(kernel(1, 0, UINT64_MAX - core::FaultAttributor::kSlackNs));
  constexpr std::uint64_t kCount = 200'000;
  for (std::uint64_t i = 0; i < kCount; ++i)
    builder.add(kernel(i + 2, 1'000 + i * 1'000'000, 1'000 + i * 1'000'000 + 10));
  for (std::uint64_t i = 0; i < kCount; ++i) {
    const core::Timestamp between = 500'000 + i * 1'000'000;  // in a gap: only the long one covers it
    builder.add(core::PageFault{between, between + 1, kBase, 1, core::FaultAccess::read, 0});
  }
  const auto start = std::chrono::steady_clock::now();
  const Workload w = builder.finish();
  CHECK(w.stats.faults_attributed == kCount);
  CHECK(w.blocks_of(0).size() == 1);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}
