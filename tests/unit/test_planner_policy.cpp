// The prefetcher inside the pipeline: fabricated CUPTI-like records of a training loop go in, plans
// come out through a recording executor that keeps a simulated GPU. Checks what a user would see:
// faults vanish after warm-up, and the GPU never holds more than the limit allows.
#include <doctest/doctest.h>

#include <memory>

#include "deepum/core/event_pipeline.hpp"
#include "deepum/prefetch/planner_policy.hpp"
#include "recording_executor.hpp"

using namespace deepum;
using core::BlockId;
using core::Timestamp;

namespace {

constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kBase = 0x7f0000000000;
constexpr std::uint64_t kTensorBytes = 8 * kMiB;  // 4 blocks
constexpr std::size_t kTensors = 8;               // 64 MiB in all

// A loop whose kernel k reads tensor k, each tensor a range of its own. Its pointer argument names
// the tensor's start, so a prefetcher planning with pointer extents knows the whole tensor from the
// launch; with `named` false the launches pass no pointer (as a kernel reaching memory through a
// struct does), and the prefetcher learns the tensors from faults alone.
struct LoopRig {
  core::EventPipeline pipeline;
  test::RecordingExecutor executor;
  Timestamp now = 1'000'000'000;
  std::uint64_t next_correlation = 1;
  bool named = true;
  std::uint64_t touched_per_block = core::kBlockBytes;  // what a kernel uses of each block

  explicit LoopRig(std::uint64_t limit, std::unique_ptr<core::HintPolicy> policy)
      : pipeline(options(limit), std::move(policy)) {
    for (std::size_t i = 0; i < kTensors; ++i)
      pipeline.on_range({core::RangeEvent::Kind::allocated, now, kBase + i * kTensorBytes, kTensorBytes});
  }

  static core::PipelineOptions options(std::uint64_t limit) {
    core::PipelineOptions o;
    o.resident_limit_bytes = limit;
    o.eviction_headroom_bytes = 4 * kMiB;
    o.enforce_resident_limit = true;
    return o;
  }

  // One iteration: the host launches every kernel ahead, then the GPU runs them one by one. Returns
  // the blocks that faulted.
  std::size_t iteration() {
    std::vector<std::uint64_t> correlations;
    for (std::size_t k = 0; k < kTensors; ++k) {
      core::KernelLaunch launch;
      launch.correlation_id = next_correlation++;
      launch.execution_key = 1000 + k;
      launch.host_time = now;
      launch.pointer_count = named ? 1 : 0;
      launch.pointers[0] = kBase + k * kTensorBytes;
      pipeline.on_launch(launch);
      correlations.push_back(launch.correlation_id);
    }
    pipeline.step(now, executor, nullptr);
    std::size_t faults = 0;
    for (std::size_t k = 0; k < kTensors; ++k) {
      const Timestamp start = now;
      for (std::uint64_t offset = 0; offset < kTensorBytes; offset += core::kBlockBytes) {
        const std::uint64_t address = kBase + k * kTensorBytes + offset;
        if (executor.gpu.count(core::block_of(address)) != 0) continue;
        ++faults;
        core::PageFault fault;
        fault.start = now + 10'000;
        fault.end = fault.start + 1'000;
        fault.address = address;
        fault.access = core::FaultAccess::read;
        pipeline.on_fault(fault);
        core::Migration migration;
        migration.start = fault.end;
        migration.end = fault.end + 40'000;
        migration.address = address;
        migration.bytes = touched_per_block;
        migration.cause = core::MigrationCause::coherence;
        pipeline.on_migration(migration);
        executor.fault_in(core::block_of(address));
        now += 50'000;
      }
      now = std::max(now, start + 1'000'000);  // a kernel runs at least 1 ms
      pipeline.on_execution({correlations[k], start, now, 7, 0});
      pipeline.step(now + 100'000, executor, nullptr);
      now += 200'000;
    }
    return faults;
  }
};

std::unique_ptr<core::HintPolicy> prefetcher(std::size_t lookahead = 4, bool pointer_extents = false) {
  prefetch::PolicyOptions options;
  options.planner.pointer_extents = pointer_extents;
  options.planner.lookahead = lookahead;
  options.planner.min_lookahead = 2;
  options.planner.headroom_bytes = 4 * kMiB;
  return std::make_unique<prefetch::PlannerPolicy>(options);
}

}  // namespace

TEST_CASE("at 2x oversubscription the prefetcher removes the loop's faults and keeps under the limit") {
  for (const bool named : {true, false}) {
    CAPTURE(named);
    constexpr std::uint64_t kLimit = 32 * kMiB;  // half the loop's 64 MiB
    LoopRig reactive(kLimit, nullptr);
    // Named pointers as remote_access plans with them (whole buffers); unnamed, from faults alone.
    LoopRig deepum(kLimit, prefetcher(4, /*pointer_extents=*/named));
    reactive.named = deepum.named = named;
    std::size_t reactive_faults = 0, deepum_faults = 0, deepum_warm_faults = 0;
    std::uint64_t warm_peak_blocks = 0;
    for (int i = 0; i < 12; ++i) {
      reactive_faults += reactive.iteration();
      if (i == 6) deepum.executor.peak_gpu_blocks = deepum.executor.gpu.size();
      const std::size_t faults = deepum.iteration();
      deepum_faults += faults;
      if (i >= 6) deepum_warm_faults += faults;
    }
    warm_peak_blocks = deepum.executor.peak_gpu_blocks;
    INFO("reactive faults " << reactive_faults << ", deepum " << deepum_faults << " (" << deepum_warm_faults
                            << " after warm-up)");
    // Reactive LRU over a cyclic loop larger than memory faults on nearly every block, every iteration.
    CHECK(reactive_faults * 10 >= 9 * 12 * kTensors * 4);
    // Once learned, the prefetcher leaves at most a twentieth of them.
    CHECK(deepum_warm_faults * 20 <= 6 * kTensors * 4);
    // Once learned, the simulated GPU never held more than the limit. While learning, demand faults
    // may overshoot it by what one kernel faults in beyond the headroom before the safety net acts.
    CHECK(warm_peak_blocks * core::kBlockBytes <= kLimit);
    CHECK(deepum.pipeline.residency().peak_resident_bytes() <= kLimit + kTensorBytes - 4 * kMiB);
    const core::PipelineStats stats = deepum.pipeline.stats();
    CHECK(stats.prefetching);
    CHECK(stats.prefetch.plans > 0);
    CHECK(stats.prefetch.prefetched_bytes > 0);
    CHECK(stats.prefetch.pre_evicted_bytes > 0);
    CHECK(stats.prefetch.timely > stats.prefetch.late);
    // Every fault is counted once, as predicted-but-late or as unpredicted. Learning from faults, most
    // are unpredicted while learning; named pointers leave next to none even in the first iteration.
    CHECK(stats.prefetch.faults_in_window + stats.prefetch.faults_outside_window == stats.fault_records);
    if (named) {
      CHECK(deepum_faults <= kTensors * 4 / 4);
    } else {
      CHECK(stats.prefetch.faults_outside_window > stats.prefetch.faults_in_window);
    }
    CHECK_FALSE(reactive.pipeline.stats().prefetching);
  }
}

TEST_CASE("blocks the program uses in part are prefetched and held in part, so what fits is not evicted") {
  // The loop spans 64 MiB of blocks but uses a quarter of each: 16 MiB fit under a 32 MiB limit.
  // Counted as whole blocks they would not, and every plan would evict what the next one fetches.
  constexpr std::uint64_t kLimit = 32 * kMiB;
  LoopRig deepum(kLimit, prefetcher());
  deepum.touched_per_block = core::kBlockBytes / 4;
  std::size_t warm_faults = 0;
  for (int i = 0; i < 8; ++i) {
    const std::size_t faults = deepum.iteration();
    if (i >= 2) warm_faults += faults;
  }
  const core::PipelineStats stats = deepum.pipeline.stats();
  INFO("warm faults " << warm_faults << ", pre-evicted " << stats.prefetch.pre_evicted_bytes);
  CHECK(warm_faults == 0);  // nothing left the GPU, so nothing faults again
  CHECK(stats.prefetch.pre_evicted_bytes == 0);
  CHECK(deepum.executor.evicted.empty());
  // The tensor's second block was learned by faulting (its first, named by the launch, was
  // prefetched whole before the kernel ever ran, so nothing was learned of it).
  CHECK(deepum.pipeline.residency().touched_bytes(core::block_of(kBase) + 1) == core::kBlockBytes / 4);
  CHECK(deepum.pipeline.residency().peak_resident_bytes() <= kLimit);
}

TEST_CASE("while evictions are still running no more are planned; once done, eviction resumes") {
  constexpr std::uint64_t kLimit = 32 * kMiB;
  LoopRig rig(kLimit, prefetcher());
  for (int i = 0; i < 4; ++i) rig.iteration();
  const std::size_t plans = rig.executor.plans.size();
  REQUIRE(plans > 0);
  rig.executor.evicting = 8 * kMiB;  // 8 MiB still on its way out
  rig.iteration();
  for (std::size_t i = plans; i < rig.executor.plans.size(); ++i) {
    CHECK(rig.executor.plans[i].evict.empty());
    CHECK(rig.executor.plans[i].discard.empty());
  }
  rig.executor.evicting = 0;
  const std::size_t before = rig.executor.plans.size();
  rig.iteration();
  bool evicted = false;
  for (std::size_t i = before; i < rig.executor.plans.size(); ++i)
    evicted = evicted || !rig.executor.plans[i].evict.empty();
  CHECK(evicted);
}

TEST_CASE("without pre-eviction the prefetcher still prefetches and the safety net holds the limit") {
  constexpr std::uint64_t kLimit = 32 * kMiB;
  prefetch::PolicyOptions options;
  options.planner.lookahead = 4;
  options.planner.headroom_bytes = 4 * kMiB;
  options.pre_evict = false;
  LoopRig rig(kLimit, std::make_unique<prefetch::PlannerPolicy>(options));
  for (int i = 0; i < 8; ++i) rig.iteration();
  const core::PipelineStats stats = rig.pipeline.stats();
  CHECK(stats.prefetch.pre_evicted_bytes == 0);
  CHECK(stats.prefetch.prefetched_bytes > 0);
  CHECK(stats.deepum_evictions > 0);
  for (const core::HintPlan& plan : rig.executor.plans) CHECK(plan.evict.empty());
}
