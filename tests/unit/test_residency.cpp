// ResidencyMap, FaultAttributor, LaunchQueue and EventPipeline on fabricated event streams.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "deepum/core/event_pipeline.hpp"
#include "deepum/core/launch_ordered_residency.hpp"
#include "deepum/core/residency_replay.hpp"

using namespace deepum::core;

namespace {
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kBase = 0x7f0000000000;  // 2 MB aligned

PageFault fault_at(std::uint64_t address, Timestamp t) {
  PageFault f;
  f.address = address;
  f.start = t;
  f.end = t + 100;
  return f;
}

Migration migration(std::uint64_t address, std::uint64_t bytes, MigrationDirection direction, Timestamp t) {
  Migration m;
  m.address = address;
  m.bytes = bytes;
  m.direction = direction;
  m.start = t;
  m.end = t + 10;
  return m;
}

// A pipeline that checks `limit` by the records in time order (the engine holds it).
PipelineOptions enforcing(std::uint64_t limit) {
  PipelineOptions options;
  options.resident_limit_bytes = limit;
  options.enforce_resident_limit = true;
  return options;
}

constexpr Timestamp kMs = 1'000'000;
}  // namespace

TEST_CASE("residency follows faults and migrations, clipped to managed ranges") {
  ResidencyMap map;
  map.on_range_allocated(kBase, 5 * kMiB);  // blocks 0,1 full; block 2 holds 1 MiB
  map.on_fault(fault_at(kBase + 100, 1));
  CHECK(map.resident_bytes() == 2 * kMiB);
  map.on_fault(fault_at(kBase + 4 * kMiB + 5, 2));  // the partial block: only its 1 MiB counts
  CHECK(map.resident_bytes() == 3 * kMiB);
  map.on_migration(migration(kBase + 2 * kMiB, 1 * kMiB, MigrationDirection::host_to_device, 3));
  CHECK(map.resident_bytes_of(block_of(kBase + 2 * kMiB)) == 1 * kMiB);
  CHECK(map.resident_bytes() == 4 * kMiB);
  map.on_migration(migration(kBase, 3 * kMiB, MigrationDirection::device_to_host, 4));
  CHECK(map.resident_bytes() == 1 * kMiB);  // block 0 gone, block 1 half, block 2 resident
  CHECK(map.peak_resident_bytes() == 4 * kMiB);
  map.on_fault(fault_at(0x1000, 5));  // not managed: ignored
  CHECK(map.resident_bytes() == 1 * kMiB);
  map.on_range_freed(kBase, 5 * kMiB);
  CHECK(map.resident_bytes() == 0);
  CHECK(map.tracked_blocks() == 0);
}

TEST_CASE("faults are attributed to the kernel running at their time, late records included") {
  FaultAttributor attributor;
  KernelLaunch launch;
  launch.correlation_id = 7;
  launch.execution_key = 77;
  attributor.on_launch(launch);
  attributor.on_fault(fault_at(kBase, 1'500'000));  // during kernel 7
  attributor.on_fault(fault_at(kBase, 5'000'000));  // during kernel 8, whose record comes later
  attributor.on_execution({7, 1'000'000, 2'000'000, 1, 0});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;  // correlation, key
  auto collect = [&](const PageFault&, const KernelExecution& e, const LaunchSummary* l) {
    seen.emplace_back(e.correlation_id, l ? l->execution_key : 0);
  };
  attributor.attribute(collect);
  CHECK(seen.size() == 1);
  CHECK(seen[0] == std::pair<std::uint64_t, std::uint64_t>{7, 77});
  CHECK(attributor.stats().pending() == 1);
  attributor.on_execution({8, 4'000'000, 6'000'000, 1, 0});
  attributor.attribute(collect);
  CHECK(seen.size() == 2);
  CHECK(seen[1].first == 8);
  CHECK(seen[1].second == 0);  // launch not seen
  // A fault when nothing ran is given up once kernels far later have finished, or at the end.
  attributor.on_fault(fault_at(kBase, 3'000'000));
  attributor.attribute(collect);
  CHECK(attributor.stats().pending() == 1);
  attributor.attribute(collect, /*final=*/true);
  CHECK(attributor.stats().unattributed == 1);
  CHECK(attributor.stats().attributed == 2);
}

TEST_CASE("LaunchQueue hands over every launch from many threads, in order per thread") {
  LaunchQueue queue;
  std::vector<std::thread> threads;
  for (std::uint64_t t = 0; t < 4; ++t) {
    threads.emplace_back([&queue, t] {
      for (std::uint64_t i = 0; i < 1000; ++i) {
        KernelLaunch l;
        l.correlation_id = t * 1'000'000 + i;
        queue.push(l);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(queue.producer_threads() == 4);  // the threads have exited; their launches are still queued
  std::vector<std::uint64_t> last(4, 0);
  std::size_t count = 0;
  bool ordered = true;
  queue.drain([&](const KernelLaunch& l) {
    const std::uint64_t t = l.correlation_id / 1'000'000, i = l.correlation_id % 1'000'000;
    if (i != 0 && i != last[t] + 1) ordered = false;
    last[t] = i;
    ++count;
  });
  CHECK(count == 4000);
  CHECK(ordered);
  CHECK(queue.dropped() == 0);
  CHECK(queue.producer_threads() == 0);  // drained, so the exited threads' rings are freed
}

TEST_CASE("LaunchQueue frees the rings of threads that come and go, losing no launch") {
  LaunchQueue queue;
  constexpr std::uint64_t kBatches = 50, kThreadsPerBatch = 10, kLaunchesPerThread = 100;
  std::uint64_t received = 0;
  bool ordered = true;
  for (std::uint64_t batch = 0; batch < kBatches; ++batch) {
    std::vector<std::thread> threads;
    for (std::uint64_t t = 0; t < kThreadsPerBatch; ++t) {
      threads.emplace_back([&queue, id = batch * kThreadsPerBatch + t] {
        for (std::uint64_t i = 0; i < kLaunchesPerThread; ++i) {
          KernelLaunch l;
          l.correlation_id = id * 1'000'000 + i;
          queue.push(l);
        }
      });
    }
    for (auto& thread : threads) thread.join();
    std::vector<std::uint64_t> next(kThreadsPerBatch, 0);
    queue.drain([&](const KernelLaunch& l) {
      const std::uint64_t t = l.correlation_id / 1'000'000 - batch * kThreadsPerBatch;
      if (t >= kThreadsPerBatch || l.correlation_id % 1'000'000 != next[t]++) ordered = false;
      ++received;
    });
    CHECK(queue.producer_threads() == 0);  // never more than one batch of rings at a time
  }
  CHECK(received == kBatches * kThreadsPerBatch * kLaunchesPerThread);
  CHECK(ordered);
  CHECK(queue.dropped() == 0);
}

namespace {
// Destroyed after the thread's ring holder when first touched before the thread's first launch
// (thread_local objects go in the reverse order of their construction).
struct LaunchAtThreadExit {
  LaunchQueue* queue = nullptr;
  ~LaunchAtThreadExit() {
    if (queue == nullptr) return;
    KernelLaunch l;
    l.correlation_id = 2;
    queue->push(l);
  }
};
thread_local LaunchAtThreadExit t_launch_at_exit;
}  // namespace

TEST_CASE("LaunchQueue keeps a launch made after the thread's ring was retired") {
  LaunchQueue queue;
  std::thread([&queue] {
    t_launch_at_exit.queue = &queue;
    KernelLaunch l;
    l.correlation_id = 1;
    queue.push(l);
  }).join();
  std::vector<std::uint64_t> seen;
  queue.drain([&](const KernelLaunch& l) { seen.push_back(l.correlation_id); });
  CHECK(seen == std::vector<std::uint64_t>{1, 2});
  CHECK(queue.producer_threads() == 1);  // the shared ring for such launches stays
  CHECK(queue.dropped() == 0);
}

TEST_CASE("LaunchQueue retires a thread's ring when the thread moves to another queue") {
  LaunchQueue first, second;
  KernelLaunch l;
  first.push(l);
  second.push(l);  // this thread's ring of `first` is retired now
  CHECK(first.producer_threads() == 1);
  CHECK(first.drain([](const KernelLaunch&) {}) == 1);
  CHECK(first.producer_threads() == 0);
  CHECK(second.drain([](const KernelLaunch&) {}) == 1);
  CHECK(second.producer_threads() == 1);  // this thread is alive and still launches into it
}

TEST_CASE("LaunchQueue drops rather than blocks when a ring is full") {
  LaunchQueue queue;
  KernelLaunch l;
  for (std::size_t i = 0; i < LaunchQueue::kRingCapacity + 10; ++i) queue.push(l);
  CHECK(queue.dropped() == 10);
  CHECK(queue.drain([](const KernelLaunch&) {}) == LaunchQueue::kRingCapacity);
}

TEST_CASE("the driver's thrashing answers are counted and leave residency alone") {
  EventPipeline pipeline(enforcing(64 * kMiB));
  pipeline.on_range({RangeEvent::Kind::allocated, 0, kBase, 16 * kMiB});
  pipeline.on_migration(migration(kBase, 2 * kMiB, MigrationDirection::host_to_device, 5));
  DriverAction thrashing{
      DriverAction::Kind::thrashing, DriverAction::Cause::unknown, 10, 20, kBase, 2 * kMiB};
  DriverAction throttling{DriverAction::Kind::throttling, DriverAction::Cause::unknown, 30, 40, kBase, 0};
  DriverAction by_thrashing{
      DriverAction::Kind::remote_map, DriverAction::Cause::thrashing, 50, 60, kBase, 2 * kMiB};
  DriverAction by_policy{
      DriverAction::Kind::remote_map, DriverAction::Cause::policy, 70, 80, kBase + 4 * kMiB, 64 * 1024};
  for (const DriverAction& action : {thrashing, throttling, by_thrashing, by_policy})
    pipeline.on_driver_action(action);
  pipeline.step(100, nullptr);
  const PipelineStats stats = pipeline.stats();
  CHECK(stats.thrashing_records == 1);
  CHECK(stats.thrashing_bytes == 2 * kMiB);
  CHECK(stats.throttling_records == 1);
  CHECK(stats.remote_map_records == 2);
  CHECK(stats.remote_map_bytes == 2 * kMiB + 64 * 1024);
  CHECK(stats.remote_map_bytes_for_thrashing == 2 * kMiB);
  CHECK(pipeline.residency().resident_bytes() == 2 * kMiB);
}

TEST_CASE("with ranges placed on the host first, residency counts migrations only") {
  ResidencyMap map(/*faults_make_resident=*/false);
  map.on_range_allocated(kBase, 8 * kMiB);
  map.on_fault(fault_at(kBase + 100, 1));
  CHECK(map.resident_bytes() == 0);  // the fault is answered by a migration record
  map.on_migration(migration(kBase, 64 * 1024, MigrationDirection::host_to_device, 2));
  CHECK(map.resident_bytes() == 64 * 1024);
}

TEST_CASE("faults while kernel records are paused are counted apart, prefetch faults too") {
  FaultAttributor attributor;
  PageFault prefetch = fault_at(kBase, 10);
  prefetch.access = FaultAccess::prefetch;
  attributor.on_fault(prefetch);
  attributor.set_recording_paused(true);
  attributor.on_fault(fault_at(kBase, 20));
  attributor.set_recording_paused(false);
  attributor.on_fault(fault_at(kBase, 1'500));
  attributor.on_execution({1, 1'000, 2'000, 1, 0});
  attributor.attribute([](const PageFault&, const KernelExecution&, const LaunchSummary*) {});
  CHECK(attributor.stats().from_prefetch == 1);
  CHECK(attributor.stats().while_unrecorded == 1);
  CHECK(attributor.stats().attributed == 1);
  CHECK(attributor.stats().pending() == 0);
}

TEST_CASE("after an eviction, the driver's fault-time migrations count again, whatever their cause") {
  // The driver reports the neighbours it pulls in with a fault as cause `prefetch`, like deepum's
  // own prefetches. Counting by granule keeps both right: nothing twice, nothing dropped.
  constexpr std::uint64_t kGranule = ResidencyMap::kGranuleBytes;
  ResidencyMap map(/*faults_make_resident=*/false);
  map.on_range_allocated(kBase, 4 * kMiB);
  Migration in = migration(kBase, 2 * kMiB, MigrationDirection::host_to_device, 10);
  in.cause = MigrationCause::coherence;
  map.on_migration(in);
  CHECK(map.resident_bytes() == 2 * kMiB);
  map.on_evicted({kBase, 2 * kMiB}, 20);
  CHECK(map.resident_bytes() == 0);
  // The eviction's own record, and a fault-time migration older than the eviction: no change.
  Migration out = migration(kBase, 2 * kMiB, MigrationDirection::device_to_host, 21);
  out.cause = MigrationCause::prefetch;
  map.on_migration(out);
  Migration stale = migration(kBase, 64 * 1024, MigrationDirection::host_to_device, 15);
  stale.cause = MigrationCause::prefetch;
  map.on_migration(stale);
  CHECK(map.resident_bytes() == 0);
  // The program faults the block back: 64 KB for the fault and the driver's neighbours.
  Migration fault_in = migration(kBase, 64 * 1024, MigrationDirection::host_to_device, 30);
  fault_in.cause = MigrationCause::coherence;
  Migration neighbours = migration(kBase + 64 * 1024, 448 * 1024, MigrationDirection::host_to_device, 31);
  neighbours.cause = MigrationCause::prefetch;
  map.on_migration(fault_in);
  map.on_migration(neighbours);
  CHECK(map.resident_bytes() == 512 * 1024);
  // A duplicate, and single granules at both ends of the block.
  map.on_migration(neighbours);
  map.on_migration(migration(kBase, kGranule, MigrationDirection::host_to_device, 32));
  map.on_migration(migration(kBase + 2 * kMiB - kGranule, kGranule, MigrationDirection::host_to_device, 33));
  CHECK(map.resident_bytes() == 512 * 1024 + kGranule);
  CHECK(map.resident_bytes_of(block_of(kBase)) == 512 * 1024 + kGranule);
  // A migration across the block boundary counts in both blocks.
  map.on_migration(
      migration(kBase + 2 * kMiB - kGranule, 2 * kGranule, MigrationDirection::host_to_device, 34));
  CHECK(map.resident_bytes_of(block_of(kBase) + 1) == kGranule);
  map.on_migration(migration(kBase, 4 * kMiB, MigrationDirection::device_to_host, 40));
  CHECK(map.resident_bytes() == 0);
}

TEST_CASE("Log2Histogram gives percentiles within a factor of two") {
  Log2Histogram histogram;
  CHECK(histogram.quantile(0.5) == 0);
  for (std::uint64_t v = 1; v <= 100; ++v) histogram.add(v);
  CHECK(histogram.count() == 100);
  CHECK(histogram.max() == 100);
  const std::uint64_t median = histogram.quantile(0.5);
  CHECK(median >= 50);
  CHECK(median <= 100);
  CHECK(histogram.quantile(0.99) == 100);  // capped at the largest value seen
  histogram.add(0);
  CHECK(histogram.quantile(0.001) == 0);
}

TEST_CASE("a migration record older than deepum's own move of the block is not replayed") {
  ResidencyMap map(/*faults_make_resident=*/false);
  map.on_range_allocated(kBase, 4 * kMiB);
  map.on_migration(migration(kBase, 4 * kMiB, MigrationDirection::host_to_device, 1'000));
  map.on_evicted({kBase, 2 * kMiB}, 2'000);
  CHECK(map.resident_bytes() == 2 * kMiB);
  // A transfer reported late that started before the eviction: block 0 stays out.
  map.on_migration(migration(kBase, 4 * kMiB, MigrationDirection::host_to_device, 1'500));
  CHECK(map.resident_bytes() == 2 * kMiB);
  // A fault after the eviction brings block 0 back.
  map.on_migration(migration(kBase, 64 * 1024, MigrationDirection::host_to_device, 2'500));
  CHECK(map.resident_bytes() == 2 * kMiB + 64 * 1024);
}

TEST_CASE("replay_residency orders records by time, whatever order they arrived in") {
  Trace trace;
  trace.ranges.push_back({RangeEvent::Kind::allocated, 1, kBase, 64 * kMiB});
  // Arrival order: an eviction's record before the fault-in it followed on the GPU, then more
  // fault-ins. In time: 0-8 MiB in at 100, 8 more in at 200, the first 8 out from 300 to 310,
  // 8 more in at 400. Peak 16 MiB, from 200 to 310.
  trace.migrations.push_back(migration(kBase, 8 * kMiB, MigrationDirection::device_to_host, 300));
  trace.migrations.push_back(migration(kBase, 8 * kMiB, MigrationDirection::host_to_device, 100));
  trace.migrations.push_back(migration(kBase + 8 * kMiB, 8 * kMiB, MigrationDirection::host_to_device, 200));
  trace.migrations.push_back(migration(kBase + 16 * kMiB, 8 * kMiB, MigrationDirection::host_to_device, 400));
  trace.resident_samples.push_back({150, 24 * kMiB, 0});  // the live estimate thought more
  const ResidencyReplay replay = replay_residency(trace, 12 * kMiB);
  CHECK(replay.migrations == 4);
  CHECK(replay.peak_bytes == 16 * kMiB);
  CHECK(replay.peak_time == 200);
  CHECK(replay.first_time == 100);
  CHECK(replay.last_time == 400);
  CHECK(replay.over_limit_ns == 110);  // 16 MiB from 200 until the eviction ended at 310
  CHECK(replay.over_limit_5pct_ns == 110);
  CHECK(replay.estimated_peak_bytes == 24 * kMiB);
  std::vector<ResidencyInterval> timeline;
  replay_residency(trace, 12 * kMiB, &timeline, 100);
  REQUIRE(timeline.size() == 4);  // from the first migration (100) in steps of 100 ns
  CHECK(timeline[0].resident_max == 8 * kMiB);
  CHECK(timeline[1].resident_max == 16 * kMiB);
  CHECK(timeline[2].resident_max == 16 * kMiB);  // until the eviction ended at 310
  CHECK(timeline[3].resident_max == 16 * kMiB);  // 8 MiB back, then 8 more at 400
  CHECK(timeline[0].to_gpu_bytes == 8 * kMiB);   // the one ending at 110
  CHECK(timeline[2].to_host_bytes == 8 * kMiB);
  CHECK(timeline[0].estimated_max == 24 * kMiB);
  const std::string text = describe(replay);
  CHECK(text.find("peak resident: 16.00 MiB (+33.3% of the limit 12.00 MiB)") != std::string::npos);
  CHECK(text.find("the live estimate's peak sample: 24.00 MiB (+100.0% of the limit)") != std::string::npos);
}

TEST_CASE("the pipeline replays settled records in time order: the true peak and the time over the limit") {
  EventPipeline pipeline(enforcing(64 * kMiB));
  pipeline.on_range({RangeEvent::Kind::allocated, 1, kBase, 256 * kMiB});
  // deepum moved the first 32 MiB out at 100 ms. Their fault-in at 50 ms is reported only after
  // that, so the live estimate skips it as stale; in time, those 32 MiB sat on the GPU from 50 ms
  // until the move ended at 150 ms, next to 48 MiB faulted in at 60 ms: 80 MiB, over 64.
  pipeline.on_hint({Hint::Kind::discard, 100 * kMs, kBase, 32 * kMiB});
  pipeline.on_migration(migration(kBase, 32 * kMiB, MigrationDirection::host_to_device, 50 * kMs));
  pipeline.on_migration(
      migration(kBase + 32 * kMiB, 48 * kMiB, MigrationDirection::host_to_device, 60 * kMs));
  Migration out = migration(kBase, 32 * kMiB, MigrationDirection::device_to_host, 140 * kMs);
  out.end = 150 * kMs;
  pipeline.on_migration(out);
  pipeline.step(200 * kMs, nullptr);
  CHECK(pipeline.stats().peak_estimated_resident_bytes == 48 * kMiB);
  CHECK(pipeline.stats().peak_resident_bytes == 0);  // not settled yet
  pipeline.step(200 * kMs + EventPipeline::kSettleNs, nullptr);
  const PipelineStats stats = pipeline.stats();
  CHECK(stats.peak_resident_bytes == 80 * kMiB);
  CHECK(stats.over_limit_ms == 90);  // from 60 to 150 ms
  CHECK(stats.over_limit_5pct_ms == 90);
  CHECK(stats.replayed_ms == 100);  // migrations from 50 to 150 ms
  CHECK(stats.records_out_of_order == 0);
}

TEST_CASE("TimeOrderedResidency: held records replay in time order; one later than the delay is counted") {
  TimeOrderedResidency replay(8 * kMiB, 100 * kMs);
  replay.on_range({RangeEvent::Kind::allocated, 1, kBase, 64 * kMiB});
  // Arrival order differs from time order; equal times keep arrival order.
  replay.on_migration(migration(kBase + 4 * kMiB, 4 * kMiB, MigrationDirection::host_to_device, 30 * kMs));
  replay.on_migration(migration(kBase, 4 * kMiB, MigrationDirection::host_to_device, 10 * kMs));
  replay.on_migration(migration(kBase + 8 * kMiB, 4 * kMiB, MigrationDirection::host_to_device, 30 * kMs));
  replay.advance(50 * kMs);  // nothing has settled yet
  CHECK(replay.held() == 4);
  replay.advance(130 * kMs);  // all but nothing later than 30 ms
  CHECK(replay.held() == 0);
  CHECK(replay.resident_bytes() == 12 * kMiB);
  CHECK(replay.result().over_limit_ns == 0);  // 12 MiB only from 30 ms, the last record
  // A record from 20 ms, after 30 ms has been replayed: applied now (its bytes count from the
  // replay's 30 ms on), and counted as late.
  replay.on_migration(migration(kBase + 16 * kMiB, 4 * kMiB, MigrationDirection::host_to_device, 20 * kMs));
  replay.on_migration(migration(kBase + 12 * kMiB, 4 * kMiB, MigrationDirection::host_to_device, 40 * kMs));
  replay.advance(200 * kMs);
  CHECK(replay.result().out_of_order == 1);
  CHECK(replay.resident_bytes() == 20 * kMiB);
  CHECK(replay.result().peak_bytes == 20 * kMiB);
  CHECK(replay.result().peak_time == 40 * kMs);
  CHECK(replay.result().first_time == 10 * kMs);
  CHECK(replay.result().last_time == 40 * kMs);
  // 16 MiB from 30 to 40 ms: 10 ms over the 8 MiB limit, and over it by 5%.
  CHECK(replay.result().over_limit_ns == 10 * kMs);
  CHECK(replay.result().over_limit_5pct_ns == 10 * kMs);
  // Frees after the last migration (at exit) add no time over the limit.
  replay.on_range({RangeEvent::Kind::freed, 90 * kMs, kBase, 64 * kMiB});
  replay.finish();
  CHECK(replay.result().over_limit_ns == 10 * kMs);
}

namespace {
KernelLaunch launch_naming(std::uint64_t pointer, std::uint64_t extent) {
  KernelLaunch launch;
  launch.pointer_count = 1;
  launch.pointers[0] = pointer;
  launch.extents[0] = extent;
  return launch;
}

KernelLaunch launch_naming(std::uint64_t pointer, std::uint64_t extent, std::uint64_t second_pointer,
                           std::uint64_t second_extent) {
  KernelLaunch launch = launch_naming(pointer, extent);
  launch.pointer_count = 2;
  launch.pointers[1] = second_pointer;
  launch.extents[1] = second_extent;
  return launch;
}

// A stream as the GPU runs it: before each launch the evictions it was given (an eviction left
// running alongside counts as done only once a launch waits for it, the worst case for the limit),
// then the launch faults in every block it names.
struct InOrderGpu {
  std::set<BlockId> resident;
  std::deque<std::pair<std::uint64_t, std::vector<AddressRange>>> in_flight;  // by eviction number
  std::uint64_t peak_blocks = 0;

  void run(const LaunchEviction& decision, const KernelLaunch& launch) {
    auto drop = [&](const std::vector<AddressRange>& ranges) {
      for (const AddressRange& range : ranges)
        for_each_block_of(range, [&](BlockId b) { resident.erase(b); });
    };
    // Evictions finish in the order issued: waiting for one is waiting for those before it.
    while (!in_flight.empty() && in_flight.front().first <= decision.wait_for_eviction) {
      drop(in_flight.front().second);
      in_flight.pop_front();
    }
    if (decision.wait_for_evict) {
      drop(decision.evict);
    } else if (!decision.evict.empty()) {
      in_flight.emplace_back(decision.eviction_number, decision.evict);
    }
    for (std::size_t i = 0; i < launch.pointer_count; ++i)
      for_each_block_of({launch.pointers[i], launch.extents[i]}, [&](BlockId b) { resident.insert(b); });
    peak_blocks = std::max<std::uint64_t>(peak_blocks, resident.size());
  }
};
}  // namespace

TEST_CASE("evictions ordered before launches keep a loop larger than the limit under it") {
  constexpr std::uint64_t kLimit = 32 * kMiB;
  LaunchOrderedResidency model(kLimit, 4 * kMiB);
  // Twelve 8 MiB tensors, each its own range: 96 MiB touched per pass, three times the limit.
  for (std::uint64_t t = 0; t < 12; ++t) model.on_range_allocated(kBase + t * 8 * kMiB, 8 * kMiB);
  InOrderGpu gpu;
  for (int pass = 0; pass < 5; ++pass) {
    for (std::uint64_t t = 0; t < 12; ++t) {
      // Each kernel reads a tensor and writes the next one.
      const KernelLaunch launch =
          launch_naming(kBase + t * 8 * kMiB, 8 * kMiB, kBase + ((t + 1) % 12) * 8 * kMiB, 8 * kMiB);
      const LaunchEviction decision = model.before_launch(launch);
      // Never the memory the launch itself needs.
      for (const AddressRange& victim : decision.evict) {
        CHECK((victim.address + victim.bytes <= launch.pointers[0] ||
               victim.address >= launch.pointers[0] + 8 * kMiB));
        CHECK((victim.address + victim.bytes <= launch.pointers[1] ||
               victim.address >= launch.pointers[1] + 8 * kMiB));
        CHECK(victim.bytes % kBlockBytes == 0);
      }
      gpu.run(decision, launch);
      CHECK(gpu.resident.size() * kBlockBytes <= kLimit);
      CHECK(model.resident_bytes() + model.pending_bytes() <= kLimit);
    }
  }
  CHECK(gpu.peak_blocks * kBlockBytes == kLimit);  // the room is used, not wasted
  const LaunchOrderedStats stats = model.stats();
  CHECK(stats.launches == 60);
  CHECK(stats.evictions > 0);
  CHECK(stats.waits_for_pending > 0);               // evictions ran alongside the program...
  CHECK(stats.waited_evictions < stats.evictions);  // ...more often than the program stalled for one
  CHECK(stats.launches_over_limit == 0);
  CHECK(stats.peak_bytes <= kLimit);
}

TEST_CASE("ranges freed and allocated again over the same blocks are named as they are now") {
  LaunchOrderedResidency model(64 * kMiB, 4 * kMiB);
  model.on_range_allocated(kBase, 8 * kMiB);
  model.before_launch(launch_naming(kBase + kMiB, 0));  // to the end of its range: 4 blocks
  CHECK(model.resident_bytes() == 8 * kMiB);
  model.before_launch(launch_naming(kBase + 5 * kMiB, kMiB));  // the same blocks, found again
  CHECK(model.resident_bytes() == 8 * kMiB);
  // Freed: its blocks are no longer the model's; a pointer into them names nothing.
  model.on_range_freed(kBase);
  CHECK(model.resident_bytes() == 0);
  model.before_launch(launch_naming(kBase + kMiB, kMiB));
  CHECK(model.resident_bytes() == 0);
  // Two smaller ranges over the first block and the second, sharing none of it with another.
  model.on_range_allocated(kBase, kMiB);
  model.on_range_allocated(kBase + kMiB, 3 * kMiB);
  model.before_launch(launch_naming(kBase + kMiB, 0));  // the second range: 1 MiB + one block
  CHECK(model.resident_bytes() == 3 * kMiB);
  model.before_launch(launch_naming(kBase, 0));  // the first: the rest of the shared block
  CHECK(model.resident_bytes() == 4 * kMiB);
  model.before_launch(launch_naming(kBase + 3 * kMiB, 0));  // the second's block alone, found again
  CHECK(model.resident_bytes() == 4 * kMiB);
}

TEST_CASE("a loop whose ranges fit the limit exactly is never evicted; one more range is") {
  // Sixteen 8 MiB tensors, 128 MiB, a limit of exactly that: evicting a batch ahead by LRU would
  // take the tensor the loop needs next, every pass.
  constexpr std::uint64_t kTensor = 8 * kMiB, kTensors = 16, kLimit = kTensors * kTensor;
  LaunchOrderedResidency model(kLimit, 4 * kTensor, {.prefetch = true});
  for (std::uint64_t t = 0; t < kTensors; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
  InOrderGpu gpu;
  const auto pass = [&](std::uint64_t tensors) {
    for (std::uint64_t t = 0; t < tensors; ++t)
      gpu.run(model.before_launch(launch_naming(kBase + t * kTensor, kTensor)),
              launch_naming(kBase + t * kTensor, kTensor));
  };
  for (int i = 0; i < 4; ++i) pass(kTensors);
  CHECK(model.stats().evictions == 0);
  CHECK(gpu.resident.size() * kBlockBytes == kLimit);
  // A seventeenth tensor: the ranges no longer fit, and the limit is held by evicting.
  model.on_range_allocated(kBase + kTensors * kTensor, kTensor);
  for (int i = 0; i < 2; ++i) pass(kTensors + 1);
  CHECK(model.stats().evictions > 0);
  CHECK(gpu.resident.size() * kBlockBytes <= kLimit);
  // Freed again: 128 MiB fit, and nothing more is evicted.
  model.on_range_freed(kBase + kTensors * kTensor);
  const std::uint64_t evictions = model.stats().evictions;
  for (int i = 0; i < 3; ++i) pass(kTensors);
  CHECK(model.stats().evictions == evictions);
}

namespace {
constexpr std::uint64_t kTensor = 8 * kMiB;

// Bytes evicted over passes 3 to 8 of a loop over `tensors` 8 MiB tensors, one launch each, under
// `limit` with evictions of `batch`; checks the limit holds and, with prediction, that no victim
// is the next launch's tensor once the loop is learned.
std::uint64_t cyclic_loop_evictions(bool by_next_use, std::uint64_t tensors, std::uint64_t limit,
                                    std::uint64_t batch = kTensor) {
  LaunchOrderedResidency model(limit, batch, {.prefetch = true, .victims_by_next_use = by_next_use});
  for (std::uint64_t t = 0; t < tensors; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
  InOrderGpu gpu;
  std::uint64_t evicted_before = 0;
  for (int pass = 0; pass < 8; ++pass) {
    if (pass == 2) evicted_before = model.stats().evicted_bytes;
    for (std::uint64_t t = 0; t < tensors; ++t) {
      const KernelLaunch launch = launch_naming(kBase + t * kTensor, kTensor);
      const LaunchEviction decision = model.before_launch(launch);
      const std::uint64_t next = kBase + ((t + 1) % tensors) * kTensor;
      for (const AddressRange& victim : decision.evict) {
        if (by_next_use && pass >= 2)
          CHECK((victim.address + victim.bytes <= next || victim.address >= next + kTensor));
      }
      gpu.run(decision, launch);
      CHECK(gpu.resident.size() * kBlockBytes <= limit);
    }
  }
  if (by_next_use) CHECK(model.stats().loop_period == tensors);
  return model.stats().evicted_bytes - evicted_before;
}
}  // namespace

TEST_CASE("a block's history keeps its namings of the last period, at most kMaxUses, as a queue would") {
  // Against a plain queue, through the ring's wrap-arounds in the block and on the heap, its
  // growth from a wrapped ring, repeated namings, namings leaving the period and namings dropped
  // past kMaxUses.
  for (const std::uint64_t keep :
       {std::uint64_t{3}, std::uint64_t{5}, std::uint64_t{40}, std::uint64_t{4096}}) {
    UseHistory history;
    std::deque<std::uint64_t> expected;
    std::uint64_t dropped = 0, now = 0, state = keep;
    const auto next_random = [&state](std::uint64_t below) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return (state >> 33) % below;
    };
    for (int i = 0; i < 3000; ++i) {
      now += i % 700 < 350 ? next_random(8) : 1;  // gaps (and repeats), then runs of consecutive namings
      history.add(now, keep);
      while (!expected.empty() && expected.front() + keep <= now) expected.pop_front();
      expected.push_back(now);
      if (expected.size() > UseHistory::kMaxUses) {
        dropped = expected.front();
        expected.pop_front();
      }
      REQUIRE(history.size() == expected.size());
      const std::uint64_t since = now - std::min(now, next_random(keep + 2));
      const auto first = std::upper_bound(expected.begin(), expected.end(), since);
      CHECK(history.first_after(since) == (first == expected.end() ? 0 : *first));
      CHECK(history.dropped_after(since) == (dropped > since));
      const std::uint64_t operation = now - std::min(now, next_random(keep + 2));
      CHECK(history.contains(operation) == std::binary_search(expected.begin(), expected.end(), operation));
    }
    CHECK(!history.empty());
    if (keep == 4096) CHECK(history.size() == UseHistory::kMaxUses);
    // Moved: the namings go along, and what is left is an empty history that works.
    UseHistory moved = std::move(history);
    CHECK(moved.size() == expected.size());
    CHECK(moved.contains(expected.back()));
    CHECK(history.empty());
    history.add(now + 1, keep);
    CHECK(history.first_after(now) == now + 1);
  }
}

TEST_CASE("in a loop, victims by predicted next use move half what least recently named ones do") {
  // Sixteen tensors under a limit of eight: the least recently named is always the next one the
  // loop needs, so every pass moves all sixteen out (and back); keeping the eight named soonest
  // moves about the eight others (plus the batch kept free).
  constexpr std::uint64_t kPasses = 6;
  const std::uint64_t lru = cyclic_loop_evictions(false, 16, 8 * kTensor);
  const std::uint64_t predicted = cyclic_loop_evictions(true, 16, 8 * kTensor);
  CHECK(lru >= kPasses * 15 * kTensor);
  CHECK(predicted <= kPasses * 10 * kTensor);
  MESSAGE("evicted per pass: least recently named ", lru / kPasses / kMiB, " MiB, by next use ",
          predicted / kPasses / kMiB, " MiB");
}

TEST_CASE("a loop that outgrows the limit takes victims by next use from its second pass over it on") {
  // Eight tensors fit: nothing is evicted. Eight more: the loop's period is learned again, and from
  // the second pass over all sixteen on, never the tensor named next, and about half moved each pass.
  constexpr std::uint64_t kPasses = 6;
  LaunchOrderedResidency model(8 * kTensor, kTensor, {.prefetch = true});
  for (std::uint64_t t = 0; t < 8; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
  InOrderGpu gpu;
  const auto pass = [&](std::uint64_t tensors, bool check_victims) {
    for (std::uint64_t t = 0; t < tensors; ++t) {
      const KernelLaunch launch = launch_naming(kBase + t * kTensor, kTensor);
      const LaunchEviction decision = model.before_launch(launch);
      const std::uint64_t next = kBase + ((t + 1) % tensors) * kTensor;
      for (const AddressRange& victim : decision.evict) {
        if (check_victims) CHECK((victim.address + victim.bytes <= next || victim.address >= next + kTensor));
      }
      gpu.run(decision, launch);
      CHECK(gpu.resident.size() * kBlockBytes <= 8 * kTensor);
    }
  };
  for (int i = 0; i < 4; ++i) pass(8, true);
  CHECK(model.stats().evictions == 0);
  CHECK(model.stats().loop_period == 8);
  for (std::uint64_t t = 8; t < 16; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
  pass(16, false);
  pass(16, false);
  const std::uint64_t evicted_before = model.stats().evicted_bytes;
  for (std::uint64_t i = 0; i < kPasses; ++i) pass(16, true);
  CHECK(model.stats().loop_period == 16);
  CHECK(model.stats().evicted_bytes - evicted_before <= kPasses * 10 * kTensor);
  CHECK(model.stats().victims_predicted_bytes > 0);
}

TEST_CASE("ranges a block over the limit evict about that block each pass, not a batch") {
  // Sixteen tensors under a limit one block short of them, a batch of four tensors: once one
  // block is out, all the rest fits. A batch's worth out would come back within the pass.
  constexpr std::uint64_t kPasses = 6, kLimit = 16 * kTensor - kBlockBytes;
  const std::uint64_t lru = cyclic_loop_evictions(false, 16, kLimit, 4 * kTensor) / kPasses;
  const std::uint64_t predicted = cyclic_loop_evictions(true, 16, kLimit, 4 * kTensor) / kPasses;
  // Least recently named, the victim is the next launch's tensor: a few blocks each launch.
  CHECK(lru <= 16 * 3 * kBlockBytes);
  CHECK(predicted <= 3 * kBlockBytes);
  MESSAGE("evicted per pass: least recently named ", lru / kMiB, " MiB, by next use ", predicted / kMiB,
          " MiB");
}

TEST_CASE("a training-like step: victims by next use move less than least recently named ones") {
  // Weights named forward, then backward in reverse (a stack: least recently named does well
  // there), then the optimizer names each weight with its state in forward order (a sweep: least
  // recently named evicts the state it needs next). Half of it fits.
  constexpr std::uint64_t kLayers = 8, kSteps = 8;
  const auto weight = [](std::uint64_t layer) { return kBase + layer * kTensor; };
  const auto state = [](std::uint64_t layer) { return kBase + (kLayers + layer) * kTensor; };
  const auto run = [&](bool by_next_use) {
    LaunchOrderedResidency model(kLayers * kTensor, kTensor,
                                 {.prefetch = true, .victims_by_next_use = by_next_use});
    for (std::uint64_t t = 0; t < 2 * kLayers; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
    InOrderGpu gpu;
    const auto launch = [&](const KernelLaunch& op) {
      gpu.run(model.before_launch(op), op);
      CHECK(gpu.resident.size() * kBlockBytes <= kLayers * kTensor);
    };
    std::uint64_t fetched_before = 0;
    for (std::uint64_t step = 0; step < kSteps; ++step) {
      if (step == 3) fetched_before = model.stats().fetched_bytes;
      for (std::uint64_t l = 0; l < kLayers; ++l) launch(launch_naming(weight(l), kTensor));
      for (std::uint64_t l = kLayers; l-- > 0;) launch(launch_naming(weight(l), kTensor));
      for (std::uint64_t l = 0; l < kLayers; ++l)
        launch(launch_naming(weight(l), kTensor, state(l), kTensor));
    }
    return (model.stats().fetched_bytes - fetched_before) / (kSteps - 3);
  };
  const std::uint64_t lru = run(false), predicted = run(true);
  CHECK(predicted < lru);
  MESSAGE("fetched per step: least recently named ", lru / kMiB, " MiB, by next use ", predicted / kMiB,
          " MiB");
}

TEST_CASE("a waited eviction's spare room takes no block the loop names within half a period") {
  // Forward over eight weights, then an output of three tensors' size at once (a model's logits),
  // then backward over the weights in reverse, under a limit of eight tensors and a batch of one.
  // The output's room is needed now: with a tensor's room made ahead, two weights go, the furthest
  // named (the first layers'). The batch's tensor of spare room would be a weight the backward
  // pass names a few operations later, which would only come back: none is taken.
  constexpr std::uint64_t kLayers = 8, kSteps = 8;
  LaunchOrderedResidency model(kLayers * kTensor, kTensor,
                               {.prefetch = true, .victims_by_next_use = true, .ahead_operations = 1});
  const auto weight = [](std::uint64_t layer) { return kBase + layer * kTensor; };
  const std::uint64_t output = weight(kLayers);
  model.on_range_allocated(kBase, kLayers * kTensor);
  model.on_range_allocated(output, 3 * kTensor);
  std::vector<KernelLaunch> step_ops;
  for (std::uint64_t l = 0; l < kLayers; ++l) step_ops.push_back(launch_naming(weight(l), kTensor));
  step_ops.push_back(launch_naming(output, 3 * kTensor));
  for (std::uint64_t l = kLayers; l-- > 0;) step_ops.push_back(launch_naming(weight(l), kTensor));
  InOrderGpu gpu;
  std::uint64_t evicted_late = 0;
  for (std::uint64_t step = 0; step < kSteps; ++step) {
    for (std::size_t i = 0; i < step_ops.size(); ++i) {
      const LaunchEviction decision = model.before_launch(step_ops[i]);
      if (step >= 3) evicted_late += total_bytes(decision.evict);
      if (step >= 3 && i == kLayers) {
        CHECK(decision.wait_for_evict);
        CHECK(total_bytes(decision.evict) == 2 * kTensor);
        for (const AddressRange& victim : decision.evict) CHECK(victim.address + victim.bytes <= weight(3));
      }
      gpu.run(decision, step_ops[i]);
      CHECK(gpu.resident.size() * kBlockBytes <= kLayers * kTensor);
    }
  }
  CHECK(model.stats().loop_period == step_ops.size());
  CHECK(model.stats().spare_victims_skipped_blocks > 0);
  // Each step three weights make the output's room (one ahead, two waited for), then the output's
  // three tensors and one weight go as the weights come back: seven tensors (eight with a spare
  // weight taken).
  CHECK(evicted_late <= (kSteps - 3) * 7 * kTensor);
}

namespace {
// A step of kStepOps operations, each a kernel of its own shape naming half of one of 16 tensors
// (operation i names tensor i % 16, at tensor_at(step, i % 16)), under a limit of half the tensors:
// what `steps` steps evicted, and the model's statistics after them.
struct ShapeLoop {
  static constexpr std::uint64_t kTensors = 16, kStepOps = LaunchOrderedResidency::kMinShapePeriod + 64;
  std::uint64_t evicted_late = 0;         // bytes evicted from the fourth step on
  std::uint64_t next_tensor_victims = 0;  // victims of that time that the next operation names
  LaunchOrderedStats stats;
};

template <typename Tensor>
ShapeLoop run_shape_loop(bool by_next_use, std::uint64_t steps, Tensor&& tensor_at) {
  ShapeLoop result;
  LaunchOrderedResidency model(ShapeLoop::kTensors / 2 * kTensor, kTensor,
                               {.prefetch = true, .victims_by_next_use = by_next_use});
  model.on_range_allocated(kBase, 64 * ShapeLoop::kTensors * kTensor);
  InOrderGpu gpu;
  for (std::uint64_t step = 0; step < steps; ++step) {
    for (std::uint64_t op = 0; op < ShapeLoop::kStepOps; ++op) {
      KernelLaunch launch = launch_naming(tensor_at(step, op % ShapeLoop::kTensors), kTensor / 2);
      launch.function = 100 + op;
      const LaunchEviction decision = model.before_launch(launch);
      const std::uint64_t next = tensor_at(step, (op + 1) % ShapeLoop::kTensors);
      if (step >= 3) {
        result.evicted_late += total_bytes(decision.evict);
        for (const AddressRange& victim : decision.evict)
          result.next_tensor_victims +=
              victim.address < next + kTensor / 2 && next < victim.address + victim.bytes;
      }
      gpu.run(decision, launch);
      CHECK(gpu.resident.size() * kBlockBytes <= ShapeLoop::kTensors / 2 * kTensor);
    }
  }
  result.stats = model.stats();
  return result;
}
}  // namespace

TEST_CASE("a step whose tensors move within their blocks is planned with its loop of shapes") {
  // Each step's pointers lie a few KiB further into the same tensors: no address repeats, but the
  // 2 MB blocks are named at the same operations of every step, many times each.
  const auto moving = [](std::uint64_t step, std::uint64_t tensor) {
    return kBase + tensor * kTensor + step * 4096;
  };
  const ShapeLoop predicted = run_shape_loop(true, 8, moving);
  const ShapeLoop lru = run_shape_loop(false, 8, moving);
  CHECK(predicted.stats.loop_period == 0);
  CHECK(predicted.stats.shape_loop_period == ShapeLoop::kStepOps);
  CHECK(predicted.stats.planning_period == ShapeLoop::kStepOps);
  CHECK(predicted.stats.namings_repeated * 10 >= predicted.stats.namings_checked * 9);
  CHECK(predicted.stats.victims_predicted_bytes > 0);
  CHECK(predicted.next_tensor_victims == 0);
  CHECK(predicted.evicted_late * 3 <= lru.evicted_late * 2);
  MESSAGE("evicted from the fourth step: by next use ", predicted.evicted_late / kMiB,
          " MiB, least recently named ", lru.evicted_late / kMiB, " MiB");
}

TEST_CASE("a loop of shapes whose blocks change every step is not planned with") {
  // The same kernels each step, on tensors in other blocks each step (a run of identical layers
  // looks like this too): the blocks a period ago tell nothing, and victims stay least recently named.
  const auto elsewhere = [](std::uint64_t step, std::uint64_t tensor) {
    return kBase + (step * ShapeLoop::kTensors + tensor) * kTensor + step * 4096;
  };
  const ShapeLoop result = run_shape_loop(true, 8, elsewhere);
  CHECK(result.stats.shape_loop_period == ShapeLoop::kStepOps);
  CHECK(result.stats.namings_checked > 0);
  CHECK(result.stats.namings_repeated == 0);
  CHECK(result.stats.planning_period == 0);
  CHECK(result.stats.victims_predicted_bytes == 0);
}

TEST_CASE("namings one loop of shapes ago are counted alike with and without the history of operations") {
  // With swaps on, the model keeps what each operation named and reads the entry one loop of
  // shapes back in step with the launch's own namings; without, it searches each block's ring.
  // The same launches must count the same repeats, through every path: blocks named in the same
  // order; in another order; an entry too long to look through; a workspace named more often than
  // a ring keeps; a range freed and allocated again at its address each step (new blocks).
  constexpr std::uint64_t kStepOps = LaunchOrderedResidency::kMinShapePeriod + 64, kSteps = 6;
  constexpr std::uint64_t kWorkspace = kBase, kTensors = kBase + 64 * kMiB, kBig = kBase + 512 * kMiB;
  constexpr std::uint64_t kAgain = kBase + 1024 * kMiB, kBigBytes = 96 * kMiB;
  LaunchOrderedResidency with_history(4096 * kMiB, 64 * kMiB,
                                      {.prefetch = true, .swap = true, .swap_bytes = 4096 * kMiB});
  LaunchOrderedResidency without(4096 * kMiB, 64 * kMiB, {.prefetch = true});
  for (LaunchOrderedResidency* model : {&with_history, &without}) {
    model->on_range_allocated(kWorkspace, 2 * kMiB);
    model->on_range_allocated(kTensors, 16 * kTensor);
    model->on_range_allocated(kBig, kBigBytes);
  }
  for (std::uint64_t step = 0; step < kSteps; ++step) {
    for (LaunchOrderedResidency* model : {&with_history, &without}) {
      if (step != 0) model->on_range_freed(kAgain);
      model->on_range_allocated(kAgain, 4 * kMiB);
    }
    for (std::uint64_t op = 0; op < kStepOps; ++op) {
      const std::uint64_t tensor = kTensors + (op % 16) * kTensor;
      KernelLaunch launch = launch_naming(tensor, kTensor);
      if (op % 10 == 3) {  // two tensors, their order flipped every step
        const std::uint64_t other = kTensors + ((op + 5) % 16) * kTensor;
        launch = step % 2 == 0 ? launch_naming(tensor, kTensor, other, kTensor)
                               : launch_naming(other, kTensor, tensor, kTensor);
      }
      if (op % 50 == 7) launch = launch_naming(kBig + (step % 3) * 2 * kMiB, 0);  // up to 48 blocks
      if (op % 7 == 0) launch = launch_naming(kAgain, 4 * kMiB);
      launch.pointers[launch.pointer_count] = kWorkspace;  // named by every operation
      launch.extents[launch.pointer_count++] = 2 * kMiB;
      launch.function = 100 + op;
      with_history.before_launch(launch);
      without.before_launch(launch);
    }
  }
  const LaunchOrderedStats& a = with_history.stats();
  const LaunchOrderedStats& b = without.stats();
  CHECK(a.shape_loop_period == kStepOps);
  CHECK(a.namings_checked == b.namings_checked);
  CHECK(a.namings_repeated == b.namings_repeated);
  CHECK(a.namings_repeated > 0);
  CHECK(a.namings_repeated < a.namings_checked);
  MESSAGE("namings checked ", a.namings_checked, ", repeated ", a.namings_repeated);
}

TEST_CASE("a loop of addresses longer than the history is planned with once the history covers it") {
  // A step of 2,100 operations naming 16 tensors; one operation in eight names a buffer that
  // cycles through four addresses, one a step (PyTorch's allocator hands some buffers out in
  // turn). The loop of shapes is a step; the loop of addresses, four steps, is learned later and
  // is longer than the history kept until then.
  constexpr std::uint64_t kStepOps = 2100, kSteps = 14, kCycle = 4;
  LaunchOrderedResidency model(8 * kTensor, kTensor, {.prefetch = true});
  model.on_range_allocated(kBase, 32 * kTensor);
  std::uint64_t learned_at = 0, planned_at = 0;
  for (std::uint64_t step = 0; step < kSteps; ++step) {
    for (std::uint64_t op = 0; op < kStepOps; ++op) {
      const std::uint64_t tensor = op % 8 == 0 ? 16 + step % kCycle : op % 16;
      KernelLaunch launch = launch_naming(kBase + tensor * kTensor, kTensor / 2);
      launch.function = 100 + op;
      (void)model.before_launch(launch);
      const std::uint64_t now = step * kStepOps + op + 1;
      if (learned_at == 0 && model.stats().loop_period == kCycle * kStepOps) {
        learned_at = now;
        // Until then, the loop of shapes, whose blocks mostly repeat.
        CHECK(model.stats().planning_period == kStepOps);
      }
      if (planned_at == 0 && model.stats().planning_period == kCycle * kStepOps) planned_at = now;
    }
  }
  REQUIRE(learned_at != 0);
  REQUIRE(planned_at != 0);
  // The history held its minimum when the loop of addresses was learned: planning takes it up once
  // its whole period is held.
  CHECK(planned_at - learned_at >= kCycle * kStepOps - LaunchOrderedResidency::kMinHistory);
  CHECK(planned_at - learned_at <= kCycle * kStepOps);
}

TEST_CASE("with evictions ahead, two run alongside and a launch waits for the oldest only") {
  // 24 tensors of 2 MiB, each launch naming one and the next: 48 MiB a pass, three times the limit.
  constexpr std::uint64_t kLimit = 16 * kMiB, kTensor = 2 * kMiB, kTensors = 24;
  const auto loop = [&](std::uint32_t ahead, InOrderGpu& gpu, std::uint64_t& waits_leaving_one) {
    LaunchOrderedResidency model(kLimit, kTensor, {.evictions_ahead = ahead});
    for (std::uint64_t t = 0; t < kTensors; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
    std::uint64_t most_pending = 0;
    for (std::uint64_t i = 0; i < 5 * kTensors; ++i) {
      const std::uint64_t t = i % kTensors;
      const KernelLaunch launch =
          launch_naming(kBase + t * kTensor, kTensor, kBase + ((t + 1) % kTensors) * kTensor, kTensor);
      const LaunchEviction decision = model.before_launch(launch);
      // A wait that leaves a later eviction running: only the oldest room was needed.
      if (decision.wait_for_eviction != 0 && gpu.in_flight.size() > 1 &&
          gpu.in_flight.back().first > decision.wait_for_eviction)
        ++waits_leaving_one;
      gpu.run(decision, launch);
      most_pending = std::max(most_pending, model.pending_bytes());
      CHECK(gpu.resident.size() * kBlockBytes <= kLimit);
      CHECK(model.resident_bytes() + model.pending_bytes() <= kLimit);
      CHECK(gpu.in_flight.size() <= ahead);
    }
    CHECK(model.stats().launches_over_limit == 0);
    CHECK(model.stats().waited_evictions == 0);  // the room was always made ahead
    return most_pending;
  };
  InOrderGpu two;
  std::uint64_t waits_leaving_one = 0;
  CHECK(loop(2, two, waits_leaving_one) == 2 * kTensor);  // two batches in flight at once
  CHECK(waits_leaving_one > 0);
  // One ahead (the default) keeps one in flight.
  InOrderGpu one;
  std::uint64_t unused = 0;
  CHECK(loop(1, one, unused) == kTensor);
}

TEST_CASE("evictions before launches: capture, refusals, frees, and launches larger than the limit") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  LaunchOrderedResidency model(kLimit, 4 * kMiB);
  model.on_range_allocated(kBase, 64 * kMiB);
  model.on_range_allocated(kBase + 100 * kMiB, 3 * kMiB);
  // An unknown extent names the rest of the pointer's allocation; memory outside managed ranges
  // nothing.
  model.before_launch(launch_naming(kBase + 101 * kMiB, 0));
  CHECK(model.resident_bytes() == 3 * kMiB);  // two blocks, 2 + 1 MiB of them managed
  model.before_launch(launch_naming(0x1000, 4096));
  CHECK(model.resident_bytes() == 3 * kMiB);
  model.on_range_freed(kBase + 100 * kMiB);
  model.before_launch(launch_naming(kBase + kMiB, kMiB));
  CHECK(model.resident_bytes() == 2 * kMiB);
  // While the stream is captured nothing is evicted: counted only.
  const LaunchEviction captured = model.before_launch(launch_naming(kBase + 2 * kMiB, 20 * kMiB), false);
  CHECK(captured.evict.empty());
  CHECK(captured.wait_for_eviction == 0);
  CHECK(model.resident_bytes() == 22 * kMiB);
  CHECK(model.stats().launches_over_limit == 1);
  // The next launch must make room: 6 MiB over, and a batch below the limit.
  const LaunchEviction decision = model.before_launch(launch_naming(kBase + 40 * kMiB, 2 * kMiB));
  CHECK(decision.wait_for_evict);
  CHECK(total_bytes(decision.evict) == 12 * kMiB);
  CHECK(decision.evict.front().address == kBase);  // least recently named first, merged
  CHECK(model.resident_bytes() == 12 * kMiB);
  // The driver refused it: its blocks count as resident again.
  model.eviction_failed(decision);
  CHECK(model.resident_bytes() == 24 * kMiB);
  CHECK(model.stats().evictions == 0);
  // Freeing a range forgets its blocks, resident or not.
  model.on_range_freed(kBase);
  CHECK(model.resident_bytes() == 0);
  // Two ranges sharing a block: each part counts once named, and each is evicted within its own
  // allocation (an eviction call may not span two).
  model.on_range_allocated(kBase, kMiB);
  model.before_launch(launch_naming(kBase, kMiB));
  CHECK(model.resident_bytes() == kMiB);
  model.on_range_allocated(kBase + kMiB, kMiB);
  CHECK(model.resident_bytes() == kMiB);
  model.before_launch(launch_naming(kBase + kMiB, kMiB));
  CHECK(model.resident_bytes() == 2 * kMiB);
  model.on_range_allocated(kBase + 2 * kMiB, 16 * kMiB);
  const LaunchEviction both = model.before_launch(launch_naming(kBase + 2 * kMiB, 16 * kMiB));
  REQUIRE(both.evict.size() == 2);
  CHECK(both.evict[0] == AddressRange{kBase, kMiB});
  CHECK(both.evict[1] == AddressRange{kBase + kMiB, kMiB});
  CHECK(model.resident_bytes() == 16 * kMiB);
}

TEST_CASE("a finished eviction before a launch leaves the records in time order, with no bytes counted") {
  EventPipeline pipeline(enforcing(8 * kMiB));
  pipeline.on_range({RangeEvent::Kind::allocated, 0, kBase, 64 * kMiB});
  pipeline.on_migration(migration(kBase, 8 * kMiB, MigrationDirection::host_to_device, 1 * kMs));
  // deepum decides an eviction before a launch (the live estimate drops it at once); the driver's
  // record of it is lost, and deepum's own account of its end stands for it.
  pipeline.on_hint({Hint::Kind::evict_to_host, 1 * kMs + 500'000, kBase, 8 * kMiB});
  pipeline.on_eviction_done({kBase, 8 * kMiB}, 2 * kMs);
  pipeline.on_migration(migration(kBase + 8 * kMiB, 8 * kMiB, MigrationDirection::host_to_device, 3 * kMs));
  pipeline.step(4 * kMs, nullptr);
  pipeline.step(EventPipeline::kSettleNs + 10 * kMs, nullptr, true);
  const PipelineStats stats = pipeline.stats();
  CHECK(stats.peak_resident_bytes == 8 * kMiB);
  CHECK(stats.over_limit_ms == 0);
  CHECK(stats.bytes_to_host == 0);  // nothing the driver reported
}

TEST_CASE("evictions before launches: an address allocated again before its free was told") {
  LaunchOrderedResidency model(8 * kMiB, 2 * kMiB);
  model.on_range_allocated(kBase, 8 * kMiB);
  model.before_launch(launch_naming(kBase, 8 * kMiB));
  CHECK(model.resident_bytes() == 8 * kMiB);
  // The same address handed out again: the old range's blocks are forgotten, none left counted.
  model.on_range_allocated(kBase, 4 * kMiB);
  CHECK(model.resident_bytes() == 0);
  model.before_launch(launch_naming(kBase, 4 * kMiB));
  model.on_range_allocated(kBase + 4 * kMiB, 8 * kMiB);
  // Room for the new range is made from the live one only (under ASan: no stale entry is read).
  const LaunchEviction decision = model.before_launch(launch_naming(kBase + 4 * kMiB, 8 * kMiB));
  REQUIRE(decision.evict.size() == 1);
  CHECK(decision.evict[0] == AddressRange{kBase, 4 * kMiB});
  CHECK(model.resident_bytes() == 8 * kMiB);
  // A launch that names every resident block and still passes the limit evicts nothing and waits
  // for nothing.
  const LaunchEviction over = model.before_launch(launch_naming(kBase, 4 * kMiB, kBase + 4 * kMiB, 8 * kMiB));
  CHECK(over.evict.empty());
  CHECK_FALSE(over.wait_for_evict);
  CHECK(model.stats().waited_evictions == model.stats().evictions);
}

TEST_CASE("evictions are ordered before copies and memsets as before launches") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  LaunchOrderedResidency model(kLimit, 4 * kMiB);
  model.on_range_allocated(kBase, 64 * kMiB);
  // A kernel fills 16 MiB: at the limit.
  model.before_launch(launch_naming(kBase, 16 * kMiB));
  CHECK(model.resident_bytes() == 16 * kMiB);
  // A copy out of the rest of the range (the copy engine faults its source in): names exactly its
  // bytes, and the oldest blocks leave first, waited for.
  CopyLaunch copy;
  copy.operand_count = 1;
  copy.operands[0] = kBase + 32 * kMiB;
  copy.bytes = 6 * kMiB;
  const LaunchEviction before_copy = model.before_copy(copy);
  CHECK(before_copy.wait_for_evict);
  CHECK(total_bytes(before_copy.evict) == 10 * kMiB);  // 6 MiB over, plus a batch
  CHECK(before_copy.evict.front().address == kBase);
  CHECK(model.resident_bytes() == 12 * kMiB);
  // A copy between two managed operands names both; a zero-byte copy names nothing.
  copy.operand_count = 2;
  copy.operands[0] = kBase + 48 * kMiB;
  copy.operands[1] = kBase + 60 * kMiB;
  copy.bytes = 2 * kMiB;
  // At the limit with them: a batch starts leaving alongside the program.
  const LaunchEviction alongside = model.before_copy(copy);
  CHECK_FALSE(alongside.wait_for_evict);
  CHECK(total_bytes(alongside.evict) == 4 * kMiB);
  CHECK(model.resident_bytes() == 12 * kMiB);
  CHECK(model.pending_bytes() == 4 * kMiB);
  copy.operands[0] = kBase + 20 * kMiB;
  copy.bytes = 0;
  CHECK(model.before_copy(copy).evict.empty());
  CHECK(model.resident_bytes() == 12 * kMiB);
  CHECK(model.stats().copies == 3);
  CHECK(model.stats().launches == 4);
  CHECK(model.stats().peak_bytes <= kLimit);
}

TEST_CASE("with prefetching, a launch fetches what it names that is not resident, into the room made") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  LaunchOrderedResidency model(kLimit, 4 * kMiB, {.prefetch = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.on_range_allocated(kBase + 64 * kMiB, 3 * kMiB);
  // Nothing resident: the launch fetches all it names, merged per allocation, each range apart.
  KernelLaunch launch = launch_naming(kBase + 2 * kMiB, 6 * kMiB);
  launch.pointer_count = 3;
  launch.pointers[1] = kBase + 8 * kMiB;  // contiguous with the first: one range
  launch.extents[1] = 2 * kMiB;
  launch.pointers[2] = kBase + 64 * kMiB;  // another allocation
  launch.extents[2] = 3 * kMiB;
  LaunchEviction first = model.before_launch(launch);
  REQUIRE(first.fetch.size() == 2);
  CHECK(first.fetch[0] == AddressRange{kBase + 2 * kMiB, 8 * kMiB});
  CHECK(first.fetch[1] == AddressRange{kBase + 64 * kMiB, 3 * kMiB});
  CHECK(first.evict.empty());
  // Named again: resident, nothing to fetch.
  CHECK(model.before_launch(launch).fetch.empty());
  // A launch past the limit: it waits for the eviction, and fetches only its new blocks.
  KernelLaunch next = launch_naming(kBase + 8 * kMiB, 12 * kMiB);  // 8..10 resident, 10..20 new
  const LaunchEviction second = model.before_launch(next);
  CHECK(second.wait_for_evict);
  REQUIRE(second.fetch.size() == 1);
  CHECK(second.fetch[0] == AddressRange{kBase + 10 * kMiB, 10 * kMiB});
  CHECK(model.resident_bytes() <= kLimit);
  // A captured stream: counted, never fetched.
  CHECK(model.before_launch(launch_naming(kBase + 40 * kMiB, 2 * kMiB), false).fetch.empty());
  const LaunchOrderedStats stats = model.stats();
  CHECK(stats.fetches == 2);
  CHECK(stats.fetched_bytes == 21 * kMiB);
  // Without prefetching nothing is ever fetched.
  LaunchOrderedResidency plain(kLimit, 4 * kMiB);
  plain.on_range_allocated(kBase, 64 * kMiB);
  CHECK(plain.before_launch(launch_naming(kBase, 4 * kMiB)).fetch.empty());
}

TEST_CASE("with prefetching, a launch naming more than the limit leaves fetches nothing") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  LaunchOrderedResidency model(kLimit, 4 * kMiB, {.prefetch = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  CHECK(model.before_launch(launch_naming(kBase, 6 * kMiB)).fetch.size() == 1);
  // 24 MiB named, none resident: everything else is evicted, and the launch faults in what it
  // touches of them (a gather touches a fraction of its table).
  const LaunchEviction gather = model.before_launch(launch_naming(kBase + 8 * kMiB, 24 * kMiB));
  CHECK(total_bytes(gather.evict) == 6 * kMiB);
  CHECK(gather.fetch.empty());
  CHECK(model.stats().fetch_skipped_bytes == 24 * kMiB);
  CHECK(model.stats().launches_over_limit == 1);
  // A launch beside an eviction in flight fetches only into room it does not need to wait for.
  LaunchOrderedResidency alongside(kLimit, 4 * kMiB, {.prefetch = true});
  alongside.on_range_allocated(kBase, 64 * kMiB);
  alongside.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction batch = alongside.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  CHECK_FALSE(batch.wait_for_evict);
  CHECK(total_bytes(batch.evict) == 4 * kMiB);  // running alongside, room not needed yet
  CHECK(total_bytes(batch.fetch) == 2 * kMiB);
  CHECK(alongside.resident_bytes() + alongside.pending_bytes() <= kLimit);
}

TEST_CASE("with prefetching, a block the eviction in flight is moving out is fetched after it") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, {.prefetch = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 10 * kMiB));
  const LaunchEviction batch = model.before_launch(launch_naming(kBase + 10 * kMiB, 4 * kMiB));
  REQUIRE(batch.evict == std::vector<AddressRange>{{kBase, 4 * kMiB}});  // alongside, not waited for
  CHECK(batch.fetch_waits_for_eviction == 0);
  // Named again while that eviction may still run: fetched after it, not before (it would be
  // moved back out).
  const LaunchEviction again = model.before_launch(launch_naming(kBase, 2 * kMiB));
  CHECK(again.wait_for_eviction == 0);
  CHECK(again.fetch == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK(again.fetch_waits_for_eviction == batch.eviction_number);
  // Once a launch has waited for it, a later fetch of its victims waits for nothing.
  const LaunchEviction past = model.before_launch(launch_naming(kBase + 20 * kMiB, 4 * kMiB));
  CHECK(past.wait_for_eviction == batch.eviction_number);
  CHECK(model.before_launch(launch_naming(kBase + 2 * kMiB, 2 * kMiB)).fetch_waits_for_eviction == 0);
}

TEST_CASE("with discarding, victims in the allocator's cache are dropped first, not written back") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  constexpr std::uint64_t kStream = 0x5000, kOtherStream = 0x6000;
  LaunchOrderedResidency model(kLimit, 4 * kMiB, {.prefetch = true, .discard_dead = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  const auto on = [](std::uint64_t stream, KernelLaunch launch) {
    launch.stream = stream;
    return launch;
  };
  model.before_launch(on(kStream, launch_naming(kBase, 12 * kMiB)));  // 0..12 resident
  // A tensor at 1..9 MiB goes back to the cache: only its whole blocks (2..8 MiB) are dead. A new
  // tensor handed out at 6..7 MiB makes its block live again, named or not.
  model.on_buffer_returned(kBase + kMiB, 8 * kMiB, kStream);
  CHECK(model.stats().dead_returned_bytes == 6 * kMiB);
  model.on_buffer_handed_out(kBase + 6 * kMiB, kMiB);
  // Named last, the dead blocks still go first, dropped; live victims come from the LRU after them.
  model.before_launch(on(kStream, launch_naming(kBase + 8 * kMiB, 4 * kMiB)));  // 8..12 most recent
  const LaunchEviction next = model.before_launch(on(kStream, launch_naming(kBase + 20 * kMiB, 8 * kMiB)));
  CHECK(next.discard == std::vector<AddressRange>{{kBase + 2 * kMiB, 4 * kMiB}});
  CHECK(next.evict == std::vector<AddressRange>{{kBase, 2 * kMiB}, {kBase + 6 * kMiB, 2 * kMiB}});
  CHECK(next.wait_for_evict);
  CHECK(next.evict_after_launch == 1);  // the victims' last user: the eviction may start after it
  CHECK(model.launches_decided() == 3);
  // Taken back on another stream, whose kernels may still use it: written back like any other
  // victim by a launch in this stream; dropped only by a launch in that one (after its users).
  model.on_buffer_returned(kBase + 20 * kMiB, 4 * kMiB, kOtherStream);
  const LaunchEviction here = model.before_launch(on(kStream, launch_naming(kBase + 32 * kMiB, 4 * kMiB)));
  CHECK(here.discard.empty());
  CHECK(here.evict == std::vector<AddressRange>{{kBase + 8 * kMiB, 4 * kMiB}});  // alongside
  CHECK(here.evict_after_launch == 2);
  CHECK(model.pending_bytes() == 4 * kMiB);
  const LaunchEviction there =
      model.before_launch(on(kOtherStream, launch_naming(kBase + 36 * kMiB, 4 * kMiB)));
  CHECK(there.wait_for_eviction == here.eviction_number);
  CHECK(there.discard == std::vector<AddressRange>{{kBase + 20 * kMiB, 4 * kMiB}});
  CHECK(there.evict.empty());
  CHECK(model.pending_bytes() == 0);  // a discard is waited for at once: never pending
  // A discarded block named again is fetched like any other (its new contents are written by then).
  const LaunchEviction again = model.before_launch(on(kStream, launch_naming(kBase + 2 * kMiB, 2 * kMiB)));
  CHECK(again.fetch == std::vector<AddressRange>{{kBase + 2 * kMiB, 2 * kMiB}});
  const LaunchOrderedStats stats = model.stats();
  CHECK(stats.discarded_bytes == 8 * kMiB);
  CHECK(stats.dead_returned_bytes == 10 * kMiB);
  CHECK(stats.peak_bytes <= kLimit);
  // A refused discard puts its blocks back.
  model.eviction_failed(there);
  CHECK(model.stats().discarded_bytes == 4 * kMiB);
  // A buffer outside every range is ignored; without discard_dead, nothing is dead.
  model.on_buffer_returned(0x1000, 4 * kMiB, kStream);
  LaunchOrderedResidency plain(kLimit, 4 * kMiB, {.prefetch = true});
  plain.on_range_allocated(kBase, 64 * kMiB);
  plain.on_buffer_returned(kBase, 8 * kMiB, 0);
  CHECK(plain.stats().dead_returned_bytes == 0);
}

TEST_CASE("a placement follows its blocks' earlier users in the launch's stream, not all its work") {
  constexpr std::uint64_t kS = 0x5000, kOther = 0x6000;
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB,
                               {.prefetch = true, .discard_dead = true, .place_fresh = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  const auto in = [](std::uint64_t stream, KernelLaunch launch) {
    launch.stream = stream;
    return launch;
  };
  // Never named since allocated: no earlier user to follow.
  const LaunchEviction first = model.before_launch(in(kS, launch_naming(kBase, 8 * kMiB)));  // operation 1
  CHECK(first.place == std::vector<AddressRange>{{kBase, 8 * kMiB}});
  CHECK(first.place_after_launch == 0);
  CHECK(!first.place_after_stream_work);
  model.before_launch(in(kS, launch_naming(kBase + 8 * kMiB, 8 * kMiB)));  // 2
  // 0..4 taken back on the launch's stream after operation 2, 4..8 on another stream.
  model.on_buffer_returned(kBase, 4 * kMiB, kS);
  model.on_buffer_returned(kBase + 4 * kMiB, 4 * kMiB, kOther);
  // A launch naming the whole limit takes every other block out.
  model.before_launch(in(kS, launch_naming(kBase + 32 * kMiB, 16 * kMiB)));  // 3
  model.before_launch(in(kS, launch_naming(kBase + 48 * kMiB, 2 * kMiB)));   // 4
  model.on_buffer_handed_out(kBase, 8 * kMiB);
  // Taken back on the launch's stream: the placement follows the operation it was taken back at.
  const LaunchEviction same = model.before_launch(in(kS, launch_naming(kBase, 4 * kMiB)));
  CHECK(same.place == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  CHECK(same.place_after_launch == 2);
  CHECK(!same.place_after_stream_work);
  // Taken back on another stream: all the launch stream's work so far.
  const LaunchEviction other = model.before_launch(in(kS, launch_naming(kBase + 4 * kMiB, 4 * kMiB)));
  CHECK(other.place == std::vector<AddressRange>{{kBase + 4 * kMiB, 4 * kMiB}});
  CHECK(other.place_after_stream_work);
  // Named again, evicted, named again: copied back, never placed.
  model.before_launch(in(kS, launch_naming(kBase + 16 * kMiB, 16 * kMiB)));
  const LaunchEviction back = model.before_launch(in(kS, launch_naming(kBase, 4 * kMiB)));
  CHECK(back.place.empty());
  CHECK(back.place_after_launch == 0);
}

TEST_CASE("with placing, fresh blocks the first launch finds evicted are placed, not copied") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  constexpr std::uint64_t kStream = 0x5000;
  LaunchOrderedResidency model(kLimit, 4 * kMiB,
                               {.prefetch = true, .discard_dead = true, .place_fresh = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.on_range_allocated(kBase + 64 * kMiB, 3 * kMiB);  // its last block is a part, 1 MiB
  const auto on_stream = [](KernelLaunch launch) {
    launch.stream = kStream;
    return launch;
  };
  // Just allocated: nothing the program wrote, so the first launch places whole blocks; a part of
  // a block is copied (the driver drops whole pages, and a neighbour may share it).
  const LaunchEviction placed =
      model.before_launch(on_stream(launch_naming(kBase, 6 * kMiB, kBase + 64 * kMiB, 3 * kMiB)));
  CHECK(placed.place == std::vector<AddressRange>{{kBase, 6 * kMiB}, {kBase + 64 * kMiB, 2 * kMiB}});
  CHECK(placed.fetch == std::vector<AddressRange>{{kBase + 66 * kMiB, kMiB}});
  // Named once, no longer fresh: evicted and named again, it is copied back.
  CHECK(model.before_launch(on_stream(launch_naming(kBase + 8 * kMiB, 12 * kMiB))).place.size() == 1);
  const LaunchEviction back = model.before_launch(on_stream(launch_naming(kBase, 2 * kMiB)));
  CHECK(back.place.empty());
  CHECK(back.fetch == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  // 8..12 is on its way out (an eviction alongside). Returned to the cache and handed out again:
  // its whole blocks are fresh, a partly covered one is not (a live neighbour may share it), and
  // what stays in the cache (14..16) is dropped as a victim.
  CHECK(back.evict == std::vector<AddressRange>{{kBase + 8 * kMiB, 4 * kMiB}});
  model.on_buffer_returned(kBase + 8 * kMiB, 8 * kMiB, kStream);
  model.on_buffer_handed_out(kBase + 8 * kMiB, 5 * kMiB);  // 8..12 whole, 12..13 of the block 12..14
  const LaunchEviction room = model.before_launch(on_stream(launch_naming(kBase + 24 * kMiB, 12 * kMiB)));
  CHECK(room.discard == std::vector<AddressRange>{{kBase + 14 * kMiB, 2 * kMiB}});
  CHECK(total_bytes(room.evict) == 8 * kMiB);  // 12..14 among them: live, written back
  const LaunchEviction reused = model.before_launch(on_stream(launch_naming(kBase + 8 * kMiB, 6 * kMiB)));
  CHECK(reused.place == std::vector<AddressRange>{{kBase + 8 * kMiB, 4 * kMiB}});
  CHECK(reused.fetch == std::vector<AddressRange>{{kBase + 12 * kMiB, 2 * kMiB}});
  const LaunchOrderedStats stats = model.stats();
  CHECK(stats.placed_bytes == (8 + 12 + 12 + 4) * kMiB);  // each launch's fresh blocks
  CHECK(stats.peak_bytes <= kLimit);
  // A launch in a captured stream clears freshness without placing (nothing may be enqueued).
  model.on_buffer_returned(kBase + 40 * kMiB, 4 * kMiB, kStream);
  model.on_buffer_handed_out(kBase + 40 * kMiB, 4 * kMiB);
  CHECK(model.before_launch(on_stream(launch_naming(kBase + 40 * kMiB, 2 * kMiB)), false).place.empty());
  // Without prefetching, only fresh blocks move; without place_fresh, nothing is ever placed.
  LaunchOrderedResidency place_only(kLimit, 4 * kMiB, {.place_fresh = true});
  place_only.on_range_allocated(kBase, 64 * kMiB);
  const LaunchEviction only = place_only.before_launch(launch_naming(kBase, 4 * kMiB));
  CHECK(only.place == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  CHECK(only.fetch.empty());
  LaunchOrderedResidency plain(kLimit, 4 * kMiB, {.prefetch = true, .discard_dead = true});
  plain.on_range_allocated(kBase, 64 * kMiB);
  CHECK(plain.before_launch(launch_naming(kBase, 4 * kMiB)).place.empty());
}

TEST_CASE("with placing, a write deepum cannot see ends every block's freshness") {
  const auto fresh_model = [] {
    auto model = std::make_unique<LaunchOrderedResidency>(
        16 * kMiB, 4 * kMiB, LaunchOrderedOptions{.prefetch = true, .place_fresh = true});
    model->on_range_allocated(kBase, 64 * kMiB);
    return model;
  };
  // A launch whose pointer list was cut short (a foreach kernel's outputs come last) may have
  // written the fresh blocks it does not name: none is placed afterwards, they are copied.
  auto model = fresh_model();
  KernelLaunch truncated = launch_naming(kBase + 40 * kMiB, 2 * kMiB);
  truncated.pointers_truncated = true;
  CHECK(model->before_launch(truncated).place.empty());  // its own named block is not placed either
  CHECK(model->before_launch(launch_naming(kBase, 4 * kMiB)).fetch ==
        std::vector<AddressRange>{{kBase, 4 * kMiB}});
  // So may a launch with no parameter layout, a graph, or a copy deepum does not decode.
  model = fresh_model();
  KernelLaunch opaque = launch_naming(kBase + 40 * kMiB, 0);
  opaque.pointer_count = 0;
  opaque.unnamed_memory = true;
  model->before_launch(opaque);
  CHECK(model->before_launch(launch_naming(kBase, 4 * kMiB)).place.empty());
  model = fresh_model();
  CopyLaunch copy;
  copy.unnamed_memory = true;  // a 2-D copy: operands not decoded
  model->before_copy(copy);
  CHECK(model->before_launch(launch_naming(kBase, 4 * kMiB)).place.empty());
  // Blocks handed out after it are fresh again.
  model->on_buffer_returned(kBase + 8 * kMiB, 4 * kMiB, 0);
  model->on_buffer_handed_out(kBase + 8 * kMiB, 4 * kMiB);
  CHECK(model->before_launch(launch_naming(kBase + 8 * kMiB, 4 * kMiB)).place ==
        std::vector<AddressRange>{{kBase + 8 * kMiB, 4 * kMiB}});
}

TEST_CASE("with placing, a launch naming more than the limit leaves still places its fresh blocks") {
  constexpr std::uint64_t kLimit = 16 * kMiB;
  LaunchOrderedResidency model(kLimit, 4 * kMiB, {.prefetch = true, .place_fresh = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.on_range_allocated(kBase + 64 * kMiB, 64 * kMiB);
  // Named once, evicted later: no longer fresh, so it would be copied back.
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  model.before_launch(launch_naming(kBase + 16 * kMiB, 16 * kMiB));
  // 12 MiB of old data and 12 MiB fresh, none resident, 24 MiB against a 16 MiB limit: nothing is
  // copied (which parts it reads is unknown), but the fresh blocks, which it writes (and would
  // fault in whole), are placed.
  const LaunchEviction decision =
      model.before_launch(launch_naming(kBase, 12 * kMiB, kBase + 64 * kMiB, 12 * kMiB));
  CHECK(decision.fetch.empty());
  CHECK(decision.place == std::vector<AddressRange>{{kBase + 64 * kMiB, 12 * kMiB}});
  CHECK(model.resident_bytes() == 24 * kMiB);  // everything it names, as without placing
  const LaunchOrderedStats stats = model.stats();
  CHECK(stats.fetch_skipped_bytes == 12 * kMiB);  // the old data only: it faults in what it reads
  CHECK(stats.placed_bytes == (12 + 16 + 12) * kMiB);
  // Without prefetching, the same: fresh blocks past the limit are placed, nothing else moves.
  LaunchOrderedResidency place_only(8 * kMiB, 2 * kMiB, {.place_fresh = true});
  place_only.on_range_allocated(kBase, 64 * kMiB);
  const LaunchEviction all = place_only.before_launch(launch_naming(kBase, 12 * kMiB));
  CHECK(all.place == std::vector<AddressRange>{{kBase, 12 * kMiB}});
  CHECK(place_only.stats().fetch_skipped_bytes == 0);
}

TEST_CASE("with placing, a block some eviction moved out is placed after that eviction") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, {.prefetch = true, .place_fresh = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));  // placed: fresh from allocation
  const LaunchEviction first = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  REQUIRE(first.evict == std::vector<AddressRange>{{kBase, 4 * kMiB}});  // alongside
  CHECK(first.eviction_number == 1);
  // Returned and handed out again whole: fresh, not resident, placed after eviction 1.
  model.on_buffer_returned(kBase, 4 * kMiB, 0);
  model.on_buffer_handed_out(kBase, 4 * kMiB);
  const LaunchEviction again = model.before_launch(launch_naming(kBase, 4 * kMiB));
  CHECK(again.place == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  CHECK(again.place_after_eviction == 1);
  CHECK(again.placement_number == 3);  // the two launches before placed their fresh blocks too
  // A later operation naming a placed block is told which placement to wait for (it may be in
  // another stream than the launch that asked for it); one reaching unnamed memory waits for all.
  const LaunchEviction reader = model.before_launch(launch_naming(kBase + 2 * kMiB, 2 * kMiB));
  CHECK(reader.after_placement == 3);
  CHECK_FALSE(reader.after_every_placement);
  KernelLaunch foreach_kernel = launch_naming(kBase + 30 * kMiB, 2 * kMiB);
  foreach_kernel.pointers_truncated = true;
  CHECK(model.before_launch(foreach_kernel).after_every_placement);
  // Without stream_ordered_discard, a block in the cache is written back like any other victim.
  CHECK(model.stats().discarded_bytes == 0);
  LaunchOrderedResidency no_discard(16 * kMiB, 4 * kMiB, {.place_fresh = true});
  no_discard.on_range_allocated(kBase, 64 * kMiB);
  no_discard.before_launch(launch_naming(kBase, 12 * kMiB));
  no_discard.on_buffer_returned(kBase, 4 * kMiB, 0);
  const LaunchEviction victims = no_discard.before_launch(launch_naming(kBase + 12 * kMiB, 8 * kMiB));
  CHECK(victims.discard.empty());
  CHECK(total_bytes(victims.evict) >= 4 * kMiB);
}

TEST_CASE("a finished prefetch before a launch counts the range resident from its start") {
  EventPipeline pipeline(enforcing(64 * kMiB));
  pipeline.on_range({RangeEvent::Kind::allocated, 0, kBase, 64 * kMiB});
  // Decided (the live estimate counts it at once), then done on the GPU from 2 to 3 ms; CUPTI's
  // own record of it is lost.
  pipeline.on_hint({Hint::Kind::prefetch_to_gpu, 1 * kMs, kBase, 8 * kMiB});
  pipeline.on_prefetch_done({kBase, 8 * kMiB}, 2 * kMs, 3 * kMs);
  pipeline.on_eviction_done({kBase, 8 * kMiB}, 5 * kMs);
  pipeline.step(6 * kMs, nullptr);
  pipeline.step(EventPipeline::kSettleNs + 10 * kMs, nullptr, true);
  const PipelineStats stats = pipeline.stats();
  CHECK(stats.peak_resident_bytes == 8 * kMiB);
  CHECK(stats.launch_prefetched_bytes == 8 * kMiB);
  CHECK(stats.bytes_to_gpu == 0);  // nothing the driver reported
}

namespace {
LaunchOrderedOptions swapping(std::uint64_t store_bytes) {
  return {.prefetch = true, .swap = true, .swap_bytes = store_bytes};
}

// 64 MiB under a 16 MiB limit, swapping: 0..12 named, then 12..14, which swaps 0..4 out.
std::unique_ptr<LaunchOrderedResidency> with_first_blocks_swapped() {
  auto model = std::make_unique<LaunchOrderedResidency>(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model->on_range_allocated(kBase, 64 * kMiB);
  model->before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction out = model->before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  REQUIRE(out.swap_out == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  return model;
}
}  // namespace

TEST_CASE("with swapping, live victims are copied out, and a launch naming one has it copied back") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  // Within a batch of the limit: 0..4 leaves alongside the program, copied to the store.
  const LaunchEviction out = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  CHECK(out.swap_out == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  CHECK(out.evict.empty());
  CHECK(out.eviction_number == 1);
  CHECK(model.swapped_bytes() == 4 * kMiB);
  // Named again: placed and copied back after the eviction that copied it out, never fetched.
  const LaunchEviction back = model.before_launch(launch_naming(kBase, 2 * kMiB));
  CHECK(back.restore == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK(back.fetch.empty());
  CHECK(back.place_after_eviction == 1);
  CHECK(back.placement_number != 0);
  CHECK(model.swapped_bytes() == 2 * kMiB);
  // Another stream's launch naming it is ordered after that copy back.
  KernelLaunch other = launch_naming(kBase, 2 * kMiB);
  other.stream = 0x77;
  CHECK(model.before_launch(other).after_placement == back.placement_number);
  const LaunchOrderedStats stats = model.stats();
  CHECK(stats.swapped_out_bytes == 4 * kMiB);
  CHECK(stats.restored_bytes == 2 * kMiB);
  CHECK(stats.swap_peak_bytes == 4 * kMiB);
}

TEST_CASE("the most the live ranges exceeded the limit by, for the swap store to grow towards") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  CHECK(model.peak_bytes_over_limit() == 0);
  model.on_range_allocated(kBase, 12 * kMiB);
  CHECK(model.peak_bytes_over_limit() == 0);  // fits: nothing need ever leave
  model.on_range_allocated(kBase + 64 * kMiB, 20 * kMiB);
  CHECK(model.peak_bytes_over_limit() == 16 * kMiB);
  // Memory returned to the allocator is no one's to keep; the peak stays, for the next step.
  model.on_buffer_returned(kBase + 64 * kMiB, 8 * kMiB, 0);
  model.on_range_freed(kBase);
  CHECK(model.peak_bytes_over_limit() == 16 * kMiB);
  model.on_range_allocated(kBase, 16 * kMiB);
  CHECK(model.peak_bytes_over_limit() == 16 * kMiB);  // 28 MiB live: 12 over
  // Handed out again: 36 MiB live, past the peak.
  model.on_buffer_handed_out(kBase + 64 * kMiB, 8 * kMiB);
  CHECK(model.peak_bytes_over_limit() == 20 * kMiB);
  model.on_range_allocated(kBase + 128 * kMiB, 4 * kMiB);
  CHECK(model.peak_bytes_over_limit() == 24 * kMiB);
}

TEST_CASE("with swapping, an operation naming memory only in part has every swapped block copied back") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));  // 0..4 swapped out
  REQUIRE(model.swapped_bytes() == 4 * kMiB);
  // Its whole pointer list known: it names what it uses, nothing comes back.
  KernelLaunch foreach_kernel = launch_naming(kBase + 14 * kMiB, 2 * kMiB);
  foreach_kernel.pointers_truncated = true;
  const std::array<std::uint64_t, 2> pointers{kBase + 14 * kMiB, kBase + 16 * kMiB};
  const std::array<std::uint64_t, 2> extents{2 * kMiB, 2 * kMiB};
  const LaunchPointers every{pointers.data(), extents.data(), 2, true};
  const LaunchEviction seen = model.before_launch(foreach_kernel, true, &every);
  CHECK(seen.unswap.empty());
  CHECK_FALSE(seen.after_every_placement);
  // Its list cut short (or unreadable): it may read any swapped block, so all come back first,
  // and none of its own victims is swapped.
  const LaunchPointers cut{pointers.data(), extents.data(), 2, false};
  foreach_kernel.pointers[0] = kBase + 20 * kMiB;
  const std::uint64_t swapped = model.swapped_bytes();
  const LaunchEviction unseen = model.before_launch(foreach_kernel, true, &cut);
  CHECK(total_bytes(unseen.unswap) == swapped);
  CHECK(unseen.swap_out.empty());
  CHECK(model.swapped_bytes() == 0);
  CHECK(model.stats().unswaps == 1);
  // A copy deepum does not decode, likewise (nothing is swapped now, so nothing comes back).
  CopyLaunch copy;
  copy.unnamed_memory = true;
  CHECK(model.before_copy(copy).unswap.empty());
}

TEST_CASE("with swapping, blocks named in another stream, past the store or refused are written back") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(2 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  KernelLaunch elsewhere = launch_naming(kBase, 2 * kMiB);
  elsewhere.stream = 0x77;
  model.before_launch(elsewhere);
  model.before_launch(launch_naming(kBase, 12 * kMiB));  // 0..2 named in two streams now
  const LaunchEviction out = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  // 0..2: another stream's kernel may still use it; 2..4 fits the 2 MiB store.
  CHECK(out.evict == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK(out.swap_out == std::vector<AddressRange>{{kBase + 2 * kMiB, 2 * kMiB}});
  CHECK(model.stats().swap_skipped_other_stream_bytes == 2 * kMiB);
  // The store full: the next victims are written back.
  const LaunchEviction full = model.before_launch(launch_naming(kBase + 14 * kMiB, 4 * kMiB));
  CHECK(full.swap_out.empty());
  CHECK_FALSE(full.evict.empty());
  // The store refusing a block while it grows: written back instead, and the next victims are
  // swapped again.
  LaunchOrderedResidency growing(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  growing.on_range_allocated(kBase, 64 * kMiB);
  growing.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction not_yet = growing.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  growing.swap_refused(not_yet.swap_out, /*store_full=*/false);
  CHECK(growing.swapped_bytes() == 0);
  CHECK_FALSE(growing.before_launch(launch_naming(kBase + 14 * kMiB, 6 * kMiB)).swap_out.empty());
  // The store full for good: written back instead, and nothing is swapped from then on.
  LaunchOrderedResidency refused(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  refused.on_range_allocated(kBase, 64 * kMiB);
  refused.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction first = refused.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  refused.swap_refused(first.swap_out, /*store_full=*/true);
  CHECK(refused.swapped_bytes() == 0);
  CHECK(refused.stats().swapped_out_bytes == 0);
  const LaunchEviction later = refused.before_launch(launch_naming(kBase + 14 * kMiB, 6 * kMiB));
  CHECK(later.swap_out.empty());
  CHECK_FALSE(later.evict.empty());
}

TEST_CASE("with swapping, blocks a pointer table copied to the GPU holds are restored and never swapped") {
  const std::unique_ptr<LaunchOrderedResidency> owner = with_first_blocks_swapped();
  LaunchOrderedResidency& model = *owner;
  // A small table (in the first block of another buffer) holding pointers to 0..2 and 4..6: the
  // copy names them, so 0..2 is copied back before it, and both lose any chance of being swapped.
  CopyLaunch table;
  table.operand_count = 1;
  table.operands[0] = kBase + 40 * kMiB;
  table.bytes = 256;
  const std::array<std::uint64_t, 2> pointers{kBase, kBase + 4 * kMiB};
  const std::array<std::uint64_t, 2> extents{2 * kMiB, 2 * kMiB};
  const LaunchPointers referenced{pointers.data(), extents.data(), 2, true};
  const LaunchEviction copied = model.before_copy(table, true, &referenced);
  CHECK(copied.restore == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK_FALSE(copied.after_every_placement);
  // Room needed again: the least recently named victims now include 0..2 and 4..6, which go back
  // through the driver; the others are swapped.
  model.before_launch(launch_naming(kBase + 16 * kMiB, 2 * kMiB));
  const LaunchEviction later = model.before_launch(launch_naming(kBase + 18 * kMiB, 8 * kMiB));
  const std::vector<AddressRange> moved = [&] {
    std::vector<AddressRange> all = later.evict;
    all.insert(all.end(), later.swap_out.begin(), later.swap_out.end());
    return all;
  }();
  REQUIRE(total_bytes(moved) > 0);
  const auto holds = [](const AddressRange& range, std::uint64_t block) {
    return range.address < block + 2 * kMiB && block < range.address + range.bytes;
  };
  for (const AddressRange& swapped : later.swap_out) {
    CHECK_FALSE(holds(swapped, kBase));
    CHECK_FALSE(holds(swapped, kBase + 4 * kMiB));
  }
  CHECK(model.stats().swap_skipped_other_stream_bytes >= 2 * kMiB);
  // Handed out again, a block is a new buffer, which no table holds yet.
  model.on_buffer_handed_out(kBase, 2 * kMiB);
  // A table cut short may hold any block: every swapped block comes back, none stays fresh.
  const LaunchPointers cut{pointers.data(), extents.data(), 1, false};
  const LaunchEviction unknown = model.before_copy(table, true, &cut);
  CHECK(total_bytes(unknown.unswap) + total_bytes(unknown.restore) > 0);
  CHECK(unknown.after_every_placement);
  CHECK(model.swapped_bytes() == 0);
}

namespace {
bool holds_block(const std::vector<AddressRange>& ranges, std::uint64_t block) {
  return std::any_of(ranges.begin(), ranges.end(), [block](const AddressRange& range) {
    return range.address < block + 2 * kMiB && block < range.address + range.bytes;
  });
}

KernelLaunch in_stream(std::uint64_t stream, KernelLaunch launch) {
  launch.stream = stream;
  return launch;
}

constexpr std::uint64_t kFirst = 0x5000, kSecond = 0x6000;  // two of the program's streams

// 0..12 named in the first stream, then room made in the second, after its own work only: the
// first stream's kernels may still read 0..4, so it goes through the driver (`moved`).
struct MovedOutBySecond {
  std::unique_ptr<LaunchOrderedResidency> model;
  LaunchEviction moved;
};
MovedOutBySecond moved_out_by_second_stream() {
  auto model = std::make_unique<LaunchOrderedResidency>(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model->on_range_allocated(kBase, 64 * kMiB);
  model->before_launch(in_stream(kFirst, launch_naming(kBase, 12 * kMiB)));
  LaunchEviction moved = model->before_launch(in_stream(kSecond, launch_naming(kBase + 12 * kMiB, 2 * kMiB)));
  REQUIRE(holds_block(moved.evict, kBase));
  return {std::move(model), std::move(moved)};
}
}  // namespace

TEST_CASE(
    "with swapping, a block moved out before its users in another stream is not swapped until handed out") {
  const MovedOutBySecond setup = moved_out_by_second_stream();
  LaunchOrderedResidency& model = *setup.model;
  // Named in the second stream alone since, 0..2 may still have the first stream's readers: never
  // swapped.
  model.before_launch(in_stream(kSecond, launch_naming(kBase, 2 * kMiB)));
  const LaunchEviction room =
      model.before_launch(in_stream(kSecond, launch_naming(kBase + 20 * kMiB, 14 * kMiB)));
  CHECK(holds_block(room.evict, kBase));
  CHECK_FALSE(holds_block(room.swap_out, kBase));
  // Handed out again (PyTorch does so once the other streams' users have run): swapped again.
  model.on_buffer_handed_out(kBase, 2 * kMiB);
  model.before_launch(in_stream(kSecond, launch_naming(kBase, 2 * kMiB)));
  const LaunchEviction again =
      model.before_launch(in_stream(kSecond, launch_naming(kBase + 34 * kMiB, 14 * kMiB)));
  CHECK(holds_block(again.swap_out, kBase));
  // Named again in the stream of the users the move did not follow, a block is swapped after them.
  const MovedOutBySecond other = moved_out_by_second_stream();
  LaunchOrderedResidency& same = *other.model;
  same.before_launch(in_stream(kFirst, launch_naming(kBase, 2 * kMiB)));
  const LaunchEviction followed =
      same.before_launch(in_stream(kFirst, launch_naming(kBase + 20 * kMiB, 14 * kMiB)));
  CHECK(holds_block(followed.swap_out, kBase));
}

TEST_CASE("with swapping, an eviction refused keeps what it knew of a block's other streams") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(in_stream(kFirst, launch_naming(kBase, 2 * kMiB)));
  model.before_launch(in_stream(kSecond, launch_naming(kBase, 12 * kMiB)));  // 0..2 in both streams
  const LaunchEviction refused =
      model.before_launch(in_stream(kSecond, launch_naming(kBase + 12 * kMiB, 2 * kMiB)));
  REQUIRE(holds_block(refused.evict, kBase));
  model.eviction_failed(refused);  // resident again, with its reader in the first stream
  const LaunchEviction retried =
      model.before_launch(in_stream(kSecond, launch_naming(kBase + 14 * kMiB, 14 * kMiB)));
  CHECK(holds_block(retried.evict, kBase));
  CHECK_FALSE(holds_block(retried.swap_out, kBase));
}

namespace {
// A follower that can follow a stream's operations up to `up_to` (a marker recorded after them),
// and records what it was asked.
struct Follower {
  std::uint64_t up_to = UINT64_MAX;
  std::vector<LaunchEviction::StreamOperation> asked;
  void attach(LaunchOrderedResidency& model) {
    model.set_stream_follower([this](std::uint64_t stream, std::uint64_t operation) {
      asked.push_back({stream, operation});
      return operation <= up_to;
    });
  }
};
}  // namespace

TEST_CASE("with a stream follower, a block named in two streams is swapped after its users in the other") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  Follower follower;
  follower.attach(model);
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(in_stream(kSecond, launch_naming(kBase, 2 * kMiB)));  // operation 1
  model.before_launch(in_stream(kFirst, launch_naming(kBase, 12 * kMiB)));  // 0..2 in both streams
  const LaunchEviction out =
      model.before_launch(in_stream(kFirst, launch_naming(kBase + 12 * kMiB, 2 * kMiB)));
  CHECK(holds_block(out.swap_out, kBase));
  CHECK_FALSE(holds_block(out.evict, kBase));
  CHECK(out.after_other_streams == std::vector<LaunchEviction::StreamOperation>{{kSecond, 1}});
  CHECK(model.stats().swapped_after_other_streams_bytes == 2 * kMiB);
  CHECK(model.stats().swap_skipped_other_stream_bytes == 0);
  // Blocks the first stream alone named need no other stream followed.
  CHECK(holds_block(out.swap_out, kBase + 2 * kMiB));
  CHECK(follower.asked == std::vector<LaunchEviction::StreamOperation>{{kSecond, 1}});
}

TEST_CASE("with a stream follower that cannot follow, a block named in two streams is written back") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  Follower follower;
  follower.up_to = 0;  // no marker recorded in the other stream yet
  follower.attach(model);
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(in_stream(kSecond, launch_naming(kBase, 2 * kMiB)));
  model.before_launch(in_stream(kFirst, launch_naming(kBase, 12 * kMiB)));
  const LaunchEviction out =
      model.before_launch(in_stream(kFirst, launch_naming(kBase + 12 * kMiB, 2 * kMiB)));
  CHECK(holds_block(out.evict, kBase));
  CHECK_FALSE(holds_block(out.swap_out, kBase));
  CHECK(out.after_other_streams.empty());
  CHECK(model.stats().swap_skipped_other_stream_bytes == 2 * kMiB);
}

TEST_CASE("with a stream follower, a swap follows users a driver's move before it did not") {
  // 0..4 moved out by the driver in the second stream, the first stream's readers not followed.
  const MovedOutBySecond setup = moved_out_by_second_stream();
  LaunchOrderedResidency& model = *setup.model;
  Follower follower;
  follower.attach(model);
  // Named in the second stream alone since: swapped after the first stream's operation 1, which
  // named it last there.
  model.before_launch(in_stream(kSecond, launch_naming(kBase, 2 * kMiB)));
  const LaunchEviction room =
      model.before_launch(in_stream(kSecond, launch_naming(kBase + 20 * kMiB, 14 * kMiB)));
  CHECK(holds_block(room.swap_out, kBase));
  CHECK(room.after_other_streams == std::vector<LaunchEviction::StreamOperation>{{kFirst, 1}});
}

TEST_CASE(
    "with a stream follower, a block named in more streams than it keeps is never swapped until handed out") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  Follower follower;
  follower.attach(model);
  model.on_range_allocated(kBase, 64 * kMiB);
  for (std::uint64_t stream : {0x7000u, 0x7100u, 0x7200u, 0x7300u})
    model.before_launch(in_stream(stream, launch_naming(kBase, 2 * kMiB)));
  model.before_launch(in_stream(kFirst, launch_naming(kBase, 12 * kMiB)));  // five streams named 0..2
  const LaunchEviction out =
      model.before_launch(in_stream(kFirst, launch_naming(kBase + 12 * kMiB, 2 * kMiB)));
  CHECK(holds_block(out.evict, kBase));
  CHECK_FALSE(holds_block(out.swap_out, kBase));
  // Handed out whole again (its users in other streams have run): it starts over.
  model.on_buffer_handed_out(kBase, 2 * kMiB);
  model.before_launch(in_stream(kFirst, launch_naming(kBase, 2 * kMiB)));
  const LaunchEviction again =
      model.before_launch(in_stream(kFirst, launch_naming(kBase + 20 * kMiB, 14 * kMiB)));
  CHECK(holds_block(again.swap_out, kBase));
  CHECK(again.after_other_streams.empty());
}

TEST_CASE("with swapping, a refusal told late leaves a block moved out again since as that move left it") {
  const MovedOutBySecond setup = moved_out_by_second_stream();
  LaunchOrderedResidency& model = *setup.model;
  // Named again in the first stream and swapped out by it, before the eviction thread tells that
  // the driver refused the second stream's move.
  model.before_launch(in_stream(kFirst, launch_naming(kBase, 2 * kMiB)));
  REQUIRE(holds_block(
      model.before_launch(in_stream(kFirst, launch_naming(kBase + 20 * kMiB, 14 * kMiB))).swap_out, kBase));
  LaunchEviction told;
  told.evict = setup.moved.evict;
  told.eviction_number = setup.moved.eviction_number;
  told.wait_for_evict = setup.moved.wait_for_evict;
  model.eviction_failed(told);
  // Its contents are in the store alone: the next launch naming it has it copied back.
  CHECK(holds_block(model.before_launch(in_stream(kFirst, launch_naming(kBase, 2 * kMiB))).restore, kBase));
}

TEST_CASE(
    "with swapping, a block a pointer table held is moved after the kernels decided before it is handed "
    "out") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase + 2 * kMiB, 10 * kMiB));
  // Operation 2 copies a table holding 0..2 to the GPU; operation 3, a kernel, reads it through the
  // table, naming only the table.
  CopyLaunch table;
  table.operand_count = 1;
  table.operands[0] = kBase + 40 * kMiB;
  table.bytes = 256;
  const std::array<std::uint64_t, 1> pointers{kBase};
  const std::array<std::uint64_t, 1> extents{2 * kMiB};
  const LaunchPointers referenced{pointers.data(), extents.data(), 1, true};
  model.before_copy(table, true, &referenced);
  model.before_launch(launch_naming(kBase + 40 * kMiB, 2 * kMiB));
  REQUIRE(model.launches_decided() == 3);
  // Freed and handed out again: no table holds the new buffer, and a swap of it follows operation 3
  // (the other victims were named before it; the table stays, named again).
  model.on_buffer_handed_out(kBase, 2 * kMiB);
  const LaunchEviction room =
      model.before_launch(launch_naming(kBase + 40 * kMiB, 2 * kMiB, kBase + 16 * kMiB, 14 * kMiB));
  REQUIRE(holds_block(room.swap_out, kBase));
  CHECK_FALSE(holds_block(room.swap_out, kBase + 40 * kMiB));
  CHECK(room.evict_after_launch == 3);
}

TEST_CASE("once the store is full, an operation in a stream capture still gets the swapped blocks back") {
  const std::unique_ptr<LaunchOrderedResidency> owner = with_first_blocks_swapped();
  LaunchOrderedResidency& model = *owner;
  model.swap_refused({}, /*store_full=*/true);  // no more swaps; 0..4 stays in the store
  REQUIRE(model.swapped_bytes() == 4 * kMiB);
  // Nothing can be ordered before a captured operation: every swapped block comes back first.
  const LaunchEviction captured = model.before_launch(launch_naming(kBase, 2 * kMiB), /*may_evict=*/false);
  CHECK(captured.unswap == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  CHECK(model.swapped_bytes() == 0);
}

TEST_CASE("blocks another device's operation names come back, stop being fresh and are never swapped") {
  const std::unique_ptr<LaunchOrderedResidency> owner = with_first_blocks_swapped();
  LaunchOrderedResidency& model = *owner;
  const std::uint64_t resident = model.resident_bytes();
  // Another device's copy names 0..2 and 4..6 of ours, and memory that is not ours: 0..2 comes
  // back (2..4 stays swapped), nothing counts resident here.
  const std::array<std::uint64_t, 3> pointers{kBase, kBase + 4 * kMiB, kBase + 200 * kMiB};
  const std::array<std::uint64_t, 3> extents{2 * kMiB, 2 * kMiB, 2 * kMiB};
  const LaunchOrderedResidency::OtherDeviceUse use =
      model.named_by_other_device(pointers.data(), extents.data(), pointers.size());
  CHECK(use.unswap == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK(model.swapped_bytes() == 2 * kMiB);
  CHECK(model.resident_bytes() == resident);
  CHECK(use.after_placement == 0);
  // Counted: one operation, the two blocks of ours it named.
  CHECK(model.stats().other_device_uses == 1);
  CHECK(model.stats().other_device_bytes == 4 * kMiB);
  const std::uint64_t elsewhere = kBase + 200 * kMiB;
  const std::uint64_t two = 2 * kMiB;
  model.named_by_other_device(&elsewhere, &two, 1);  // none of ours: not counted
  CHECK(model.stats().other_device_uses == 1);
  // Room needed again: 0..2 and 4..6 go back through the driver, never swapped.
  model.before_launch(launch_naming(kBase + 16 * kMiB, 2 * kMiB));
  const LaunchEviction later = model.before_launch(launch_naming(kBase + 18 * kMiB, 8 * kMiB));
  REQUIRE_FALSE(later.swap_out.empty());
  const auto holds = [](const AddressRange& range, std::uint64_t block) {
    return range.address < block + 2 * kMiB && block < range.address + range.bytes;
  };
  for (const AddressRange& swapped : later.swap_out) {
    CHECK_FALSE(holds(swapped, kBase));
    CHECK_FALSE(holds(swapped, kBase + 4 * kMiB));
  }
  // A block placed here, then named by another device: the caller waits for that placement. A
  // fresh block the other device names holds what it wrote: copied in later, never placed.
  LaunchOrderedResidency placing(16 * kMiB, 4 * kMiB,
                                 LaunchOrderedOptions{.prefetch = true, .place_fresh = true});
  placing.on_range_allocated(kBase, 64 * kMiB);
  const LaunchEviction placed = placing.before_launch(launch_naming(kBase, 2 * kMiB));
  REQUIRE(placed.place == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  const std::array<std::uint64_t, 2> others{kBase, kBase + 20 * kMiB};
  const std::array<std::uint64_t, 2> reaches{2 * kMiB, 0};  // 0: to the end of the allocation
  CHECK(placing.named_by_other_device(others.data(), reaches.data(), 2).after_placement ==
        placed.placement_number);
  const LaunchEviction written = placing.before_launch(launch_naming(kBase + 20 * kMiB, 2 * kMiB));
  CHECK(written.place.empty());
  CHECK(written.fetch == std::vector<AddressRange>{{kBase + 20 * kMiB, 2 * kMiB}});
}

TEST_CASE("with swapping, dead, freed or failed blocks give their store copies back") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction out = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  REQUIRE(total_bytes(out.swap_out) == 4 * kMiB);
  // Taken back by the allocator: nothing the program can read, nothing to copy back.
  model.on_buffer_returned(kBase, 2 * kMiB, 0);
  CHECK(model.take_released() == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK(model.take_released().empty());
  CHECK(model.swapped_bytes() == 2 * kMiB);
  model.on_buffer_handed_out(kBase, 2 * kMiB);
  CHECK(model.before_launch(launch_naming(kBase, 2 * kMiB)).restore.empty());
  // A range freed: its swapped blocks too.
  model.on_range_freed(kBase);
  CHECK(model.take_released() == std::vector<AddressRange>{{kBase + 2 * kMiB, 2 * kMiB}});
  CHECK(model.swapped_bytes() == 0);
  // An eviction that could not be enqueued: its blocks were never copied out.
  LaunchOrderedResidency failing(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  failing.on_range_allocated(kBase, 64 * kMiB);
  failing.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction refused = failing.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  failing.eviction_failed(refused);
  CHECK(failing.swapped_bytes() == 0);
  CHECK(failing.resident_bytes() == 14 * kMiB);
  CHECK(failing.before_launch(launch_naming(kBase, 4 * kMiB)).restore.empty());
  // A stream capture running: nothing may be ordered before the launch, so all comes back; once
  // the capture is over, swapping goes on.
  LaunchOrderedResidency captured(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  captured.on_range_allocated(kBase, 64 * kMiB);
  captured.before_launch(launch_naming(kBase, 12 * kMiB));
  captured.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  CHECK(total_bytes(captured.before_launch(launch_naming(kBase + 40 * kMiB, 2 * kMiB), false).unswap) ==
        4 * kMiB);
  CHECK(captured.swapped_bytes() == 0);
  CHECK_FALSE(captured.before_launch(launch_naming(kBase + 20 * kMiB, 12 * kMiB)).swap_out.empty());
  // Before a capture or at exit: every swapped block comes back at once.
  CHECK(captured.swapped_bytes() != 0);
  const std::uint64_t swapped = captured.swapped_bytes();
  CHECK(total_bytes(captured.unswap_all()) == swapped);
  CHECK(captured.swapped_bytes() == 0);
}

TEST_CASE("a swap after an operation that may reach memory it does not name starts after it") {
  // The foreach kernel names none of the victims, but may read or write them: a copy out started
  // after their last namings alone could run beside it and keep stale contents.
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  const std::uint64_t named = model.launches_decided();
  KernelLaunch foreach_kernel = launch_naming(kBase + 40 * kMiB, 2 * kMiB);
  foreach_kernel.pointers_truncated = true;
  const LaunchEviction during = model.before_launch(foreach_kernel);
  CHECK(during.swap_out.empty());  // its own victims are written back by the driver
  const std::uint64_t unnamed = model.launches_decided();
  const LaunchEviction out = model.before_launch(launch_naming(kBase + 20 * kMiB, 4 * kMiB));
  REQUIRE_FALSE(out.swap_out.empty());
  CHECK(out.evict_after_launch == unnamed);
  CHECK(out.evict_after_launch > named);
}

TEST_CASE("a block named by an operation not enqueued yet is no victim until it is") {
  // Another thread's launch named 0..12 and is still inside its driver call: an event recorded in
  // the stream now lands before it, so a swap of 0..4 would copy out before it writes them.
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  const std::uint64_t other_thread = model.launches_decided();
  model.set_enqueued_below(other_thread);
  const LaunchEviction during = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  CHECK(during.swap_out.empty());
  CHECK(during.evict.empty());
  CHECK(model.stats().victims_unenqueued_blocks >= 6);
  // Enqueued: its blocks are victims again.
  model.set_enqueued_below(model.launches_decided() + 1);
  const LaunchEviction after = model.before_launch(launch_naming(kBase + 14 * kMiB, 2 * kMiB));
  CHECK(holds_block(after.swap_out, kBase));
}

TEST_CASE("no swap is decided while an operation that may reach memory it does not name is not enqueued") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 8 * kMiB));
  KernelLaunch foreach_kernel = in_stream(kSecond, launch_naming(kBase + 40 * kMiB, 2 * kMiB));
  foreach_kernel.pointers_truncated = true;
  REQUIRE(model.before_launch(foreach_kernel).evict.empty());
  // Still inside its driver call in another thread: 0..4 leave through the driver, not swapped.
  model.set_enqueued_below(model.launches_decided());
  const LaunchEviction held = model.before_launch(launch_naming(kBase + 12 * kMiB, 4 * kMiB));
  CHECK(held.swap_out.empty());
  CHECK(holds_block(held.evict, kBase));
  CHECK(model.stats().swaps_held_by_unenqueued == 1);
  model.set_enqueued_below(model.launches_decided() + 1);
  const LaunchEviction swapped = model.before_launch(launch_naming(kBase + 20 * kMiB, 8 * kMiB));
  CHECK_FALSE(swapped.swap_out.empty());
}

TEST_CASE("a dead block's discard waits for the eviction that last moved it out") {
  // Moved out alongside the program, faulted back in while that move may still be queued (no
  // prefetch, no wait), then dead: dropping it beside the move would be undefined.
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, {.prefetch = false, .discard_dead = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction out = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  REQUIRE(out.evict == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  REQUIRE_FALSE(out.wait_for_evict);
  const LaunchEviction back = model.before_launch(launch_naming(kBase, 2 * kMiB));
  CHECK(back.fetch.empty());
  CHECK(back.wait_for_eviction == 0);
  model.on_buffer_returned(kBase, 2 * kMiB, 0);
  const LaunchEviction dropping = model.before_launch(launch_naming(kBase + 20 * kMiB, 4 * kMiB));
  CHECK(dropping.discard == std::vector<AddressRange>{{kBase, 2 * kMiB}});
  CHECK(dropping.discard_after_eviction == out.eviction_number);
}

TEST_CASE("a dead block's discard follows the operation it was taken back at, not the launch's") {
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, {.prefetch = false, .discard_dead = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 4 * kMiB));  // its last user
  model.on_buffer_returned(kBase, 4 * kMiB, 0);
  const std::uint64_t returned_at = model.launches_decided();
  REQUIRE(model.before_launch(launch_naming(kBase + 4 * kMiB, 8 * kMiB)).discard.empty());
  const LaunchEviction dropping = model.before_launch(launch_naming(kBase + 12 * kMiB, 6 * kMiB));
  REQUIRE(dropping.discard == std::vector<AddressRange>{{kBase, 4 * kMiB}});
  CHECK(dropping.discard_after_launch == returned_at);
  CHECK(dropping.discard_after_launch < model.launches_decided());
}

TEST_CASE("a dead block named after it was taken back is discarded after that naming") {
  // A naming deepum saw after the return (an operation reaching past a tensor's end) is a user too.
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, {.prefetch = false, .discard_dead = true});
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 4 * kMiB));
  model.on_buffer_returned(kBase, 4 * kMiB, 0);
  model.before_launch(launch_naming(kBase + 2 * kMiB, 4 * kMiB));
  const std::uint64_t named_at = model.launches_decided();
  REQUIRE(model.before_launch(launch_naming(kBase + 6 * kMiB, 6 * kMiB)).discard.empty());
  const LaunchEviction dropping = model.before_launch(launch_naming(kBase + 12 * kMiB, 6 * kMiB));
  REQUIRE(holds_block(dropping.discard, kBase));
  CHECK(dropping.discard_after_launch == named_at);
}

TEST_CASE("a block that died while its swap ran waits for the swap's drop when it is named again") {
  // Its store copy is released with its buffer, so no copy back orders the operation naming it
  // after the swap; without after_drop the swap's drop, still to come, would wipe what it writes.
  LaunchOrderedResidency model(16 * kMiB, 4 * kMiB, swapping(64 * kMiB));
  model.on_range_allocated(kBase, 64 * kMiB);
  model.before_launch(launch_naming(kBase, 12 * kMiB));
  const LaunchEviction out = model.before_launch(launch_naming(kBase + 12 * kMiB, 2 * kMiB));
  REQUIRE_FALSE(out.swap_out.empty());
  const AddressRange victim = out.swap_out.front();
  model.on_buffer_returned(victim.address, victim.bytes, 0);
  CHECK(total_bytes(model.take_released()) == victim.bytes);  // nothing to copy back
  // Handed out again in part: live, not fresh, not swapped, not resident.
  model.on_buffer_handed_out(victim.address + 4096, kBlockBytes - 4096);
  const LaunchEviction again = model.before_launch(launch_naming(victim.address, kBlockBytes));
  CHECK(again.after_drop == out.eviction_number);
  CHECK(again.restore.empty());
  CHECK(again.place.empty());
  // Resident again, evicted by the driver this time: nothing to wait for when named next.
  const LaunchEviction later = model.before_launch(launch_naming(victim.address, kBlockBytes));
  CHECK(later.after_drop == 0);
}

TEST_CASE("with swapping and a learned loop, blocks come back ahead of the launch that names them") {
  // Sixteen 8 MiB tensors under a 64 MiB limit, one launch each. Once the loop is learned, what a
  // coming launch names is copied back while earlier launches run: that launch waits only for its
  // placement (after_placement), and the limit holds with the copies ahead counted.
  constexpr std::uint64_t kTensors = 16, kLimit = 64 * kMiB;
  LaunchOrderedResidency model(kLimit, kTensor,
                               {.prefetch = true, .swap = true, .swap_bytes = kTensors * kTensor});
  for (std::uint64_t t = 0; t < kTensors; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
  std::map<BlockId, std::uint64_t> placed_ahead_by;  // block -> its placement ahead
  std::uint64_t restored_at_launch = 0, restored_ahead = 0;
  for (std::uint64_t pass = 0; pass < 10; ++pass) {
    for (std::uint64_t t = 0; t < kTensors; ++t) {
      const KernelLaunch launch = launch_naming(kBase + t * kTensor, kTensor);
      const LaunchEviction decision = model.before_launch(launch);
      CHECK(model.resident_bytes() + model.pending_bytes() <= kLimit);
      // A launch naming a block placed ahead waits for that placement.
      for_each_block_of({launch.pointers[0], kTensor}, [&](BlockId b) {
        if (auto it = placed_ahead_by.find(b); it != placed_ahead_by.end()) {
          CHECK(decision.after_placement >= it->second);
          placed_ahead_by.erase(it);
        }
      });
      for (const AddressRange& range : decision.restore_ahead) {
        CHECK(decision.ahead_placement_number != 0);
        CHECK(decision.ahead_placement_number != decision.placement_number);
        for_each_block_of(range, [&](BlockId b) { placed_ahead_by[b] = decision.ahead_placement_number; });
      }
      if (pass >= 4) {
        restored_at_launch += total_bytes(decision.restore);
        restored_ahead += total_bytes(decision.restore_ahead);
      }
    }
  }
  CHECK(model.stats().loop_period == kTensors);
  CHECK(restored_ahead > 4 * restored_at_launch);
  MESSAGE("copied back per pass: ahead ", restored_ahead / 6 / kMiB, " MiB, at the launch ",
          restored_at_launch / 6 / kMiB, " MiB");
}

TEST_CASE("with swapping, evictions start ahead of a learned peak, taking only blocks named after it") {
  // A training-like step in a pool of 2 MB blocks the allocator holds dead between steps: the
  // forward hands out an activation per operation and names it with the one before, the loss names
  // the last, the backward names them in reverse and returns each, the optimizer names the state.
  // Live bytes peak at the loss, twice the limit. Once the loop is learned, evictions start while the
  // forward runs, and none takes a block named again before the loss. Evictions end at once here
  // (evictions_ended after each operation).
  constexpr std::uint64_t kActs = 24, kStates = 8, kLimit = 32 * kMiB, kPasses = 10;
  const auto act = [](std::uint64_t i) { return kBase + i * kBlockBytes; };
  const auto state = [](std::uint64_t i) { return kBase + (64 + i) * kBlockBytes; };
  struct Seen {
    std::uint64_t first_eviction = UINT64_MAX;  // the step's operation of the last pass's first
    std::uint64_t peak_evictions = 0;
    bool victim_named_before_peak = false;
  };
  const auto run = [&](bool room_for_peaks) {
    LaunchOrderedResidency model(kLimit, 4 * kMiB,
                                 {.prefetch = true,
                                  .discard_dead = true,
                                  .place_fresh = true,
                                  .swap = true,
                                  .swap_bytes = 64 * kMiB,
                                  .room_for_peaks = room_for_peaks});
    model.on_range_allocated(act(0), kActs * kBlockBytes);
    model.on_range_allocated(state(0), kStates * kBlockBytes);
    model.on_buffer_returned(act(0), kActs * kBlockBytes, 0);
    Seen seen;
    std::set<BlockId> out_for_peak;  // moved out ahead of this step's peak
    for (std::uint64_t pass = 0; pass < kPasses; ++pass) {
      std::uint64_t op = 0;
      const auto launch = [&](const KernelLaunch& named) {
        const std::uint64_t before = model.stats().peak_evictions;
        const LaunchEviction decision = model.before_launch(named);
        CHECK(model.resident_bytes() + model.pending_bytes() <= kLimit);
        for (std::size_t i = 0; i < named.pointer_count; ++i) {
          for_each_block_of({named.pointers[i], named.extents[i]}, [&](BlockId b) {
            if (out_for_peak.count(b) != 0) seen.victim_named_before_peak = true;
          });
        }
        const bool for_peak = model.stats().peak_evictions > before;
        if (pass == kPasses - 1 && (!decision.swap_out.empty() || !decision.evict.empty()))
          seen.first_eviction = std::min(seen.first_eviction, op);
        if (for_peak) {
          ++seen.peak_evictions;
          for (const auto* moved : {&decision.swap_out, &decision.evict}) {
            for (const AddressRange& range : *moved)
              for_each_block_of(range, [&](BlockId b) { out_for_peak.insert(b); });
          }
        }
        model.evictions_ended(model.oldest_pending_eviction() == 0 ? 0 : UINT64_MAX);
        ++op;
      };
      for (std::uint64_t i = 0; i < kActs; ++i) {
        model.on_buffer_handed_out(act(i), kBlockBytes);
        launch(i == 0 ? launch_naming(act(i), kBlockBytes)
                      : launch_naming(act(i), kBlockBytes, act(i - 1), kBlockBytes));
      }
      launch(launch_naming(act(kActs - 1), kBlockBytes));  // the loss: the peak
      out_for_peak.clear();
      for (std::uint64_t i = kActs; i-- > 0;) {
        launch(launch_naming(act(i), kBlockBytes));
        model.on_buffer_returned(act(i), kBlockBytes, 0);
      }
      for (std::uint64_t i = 0; i < kStates; ++i) launch(launch_naming(state(i), kBlockBytes));
    }
    return seen;
  };
  const Seen ahead = run(true), plain = run(false);
  CHECK(plain.peak_evictions == 0);
  CHECK(ahead.peak_evictions > 0);
  CHECK_FALSE(ahead.victim_named_before_peak);
  CHECK(ahead.first_eviction < plain.first_eviction);
  MESSAGE("the step's first eviction: operation ", ahead.first_eviction, " ahead of the peak, ",
          plain.first_eviction, " without");
}

TEST_CASE("an eviction ahead of a peak that finds no victims does not look again at every launch") {
  // A stretch names a working set round robin (a checkpointed backward reading its weights again
  // and again), then a burst of fresh activations peaks at twice the limit. Before the peak, every
  // resident live block is named again before it: no victim is fit to leave ahead of the peak, and
  // each look orders every resident block. It looks again only a pause later.
  constexpr std::uint64_t kWorking = 12, kActs = 24, kStretch = 400, kLimit = 32 * kMiB, kPasses = 8;
  const auto work = [](std::uint64_t i) { return kBase + i * kBlockBytes; };
  const auto act = [](std::uint64_t i) { return kBase + (64 + i) * kBlockBytes; };
  LaunchOrderedResidency model(
      kLimit, 4 * kMiB,
      {.prefetch = true, .discard_dead = true, .place_fresh = true, .swap = true, .swap_bytes = 128 * kMiB});
  model.on_range_allocated(work(0), kWorking * kBlockBytes);
  model.on_range_allocated(act(0), kActs * kBlockBytes);
  model.on_buffer_returned(act(0), kActs * kBlockBytes, 0);
  std::uint64_t looks = 0, stretch_launches = 0, peak_evictions = 0;  // the last half of the passes
  const auto launch = [&](const KernelLaunch& named, bool count) {
    const std::uint64_t skipped = model.stats().spare_victims_skipped_blocks;
    model.before_launch(named);
    CHECK(model.resident_bytes() + model.pending_bytes() <= kLimit);
    if (count) {
      ++stretch_launches;
      if (model.stats().spare_victims_skipped_blocks > skipped) ++looks;
    }
    model.evictions_ended(model.oldest_pending_eviction() == 0 ? 0 : UINT64_MAX);
  };
  for (std::uint64_t pass = 0; pass < kPasses; ++pass) {
    const bool learned = pass >= kPasses / 2;
    for (std::uint64_t i = 0; i < kStretch; ++i)
      launch(launch_naming(work(i % kWorking), kBlockBytes), learned);
    const std::uint64_t before = model.stats().peak_evictions;
    for (std::uint64_t i = 0; i < kActs; ++i) {
      model.on_buffer_handed_out(act(i), kBlockBytes);
      launch(launch_naming(act(i), kBlockBytes), false);
    }
    if (learned) peak_evictions += model.stats().peak_evictions - before;
    model.on_buffer_returned(act(0), kActs * kBlockBytes, 0);
  }
  REQUIRE(model.stats().loop_period == kStretch + kActs);
  // The stretch's second half lies within half a loop of the peak: without the pause it looked at
  // each of those launches.
  CHECK(looks > 0);
  const std::uint64_t pause = std::min(LaunchOrderedResidency::kPeakRetryOperations, (kStretch + kActs) / 16);
  CHECK(looks <= (kPasses / 2) * (kStretch / pause + 1));
  // Within the burst, earlier activations (named next one loop later) still leave ahead of its end.
  CHECK(peak_evictions > 0);
  MESSAGE("looks for victims ahead of the peak: ", looks, " in ", stretch_launches, " launches");
}

TEST_CASE("copies back ahead that take the room of the eviction in flight start the next one") {
  // A loop of sixteen 8 MiB tensors under a 64 MiB limit, one launch each. Once it is learned, a
  // launch whose copies back ahead take the room of the eviction running alongside the program
  // decides the next eviction too, so that one is always in flight: decided at the next launch, it
  // would come after the program's wait for that room. Its victims are never the blocks coming back.
  constexpr std::uint64_t kTensors = 16, kLimit = 64 * kMiB;
  LaunchOrderedResidency model(kLimit, kTensor,
                               {.prefetch = true, .swap = true, .swap_bytes = kTensors * kTensor});
  for (std::uint64_t t = 0; t < kTensors; ++t) model.on_range_allocated(kBase + t * kTensor, kTensor);
  std::uint64_t took_room = 0, started_next = 0;
  for (std::uint64_t pass = 0; pass < 10; ++pass) {
    for (std::uint64_t t = 0; t < kTensors; ++t) {
      const std::uint64_t pending_before = model.pending_bytes();
      const LaunchEviction decision = model.before_launch(launch_naming(kBase + t * kTensor, kTensor));
      CHECK(model.resident_bytes() + model.pending_bytes() <= kLimit);
      for (const AddressRange& back : decision.restore_ahead) {
        for (const AddressRange& out : decision.swap_out)
          CHECK((out.address + out.bytes <= back.address || back.address + back.bytes <= out.address));
      }
      if (pass < 4 || decision.restore_ahead.empty() || pending_before == 0 ||
          decision.ahead_after_eviction == 0)
        continue;
      ++took_room;
      if (!decision.swap_out.empty() && decision.eviction_number > decision.ahead_after_eviction)
        ++started_next;
    }
  }
  CHECK(took_room > 0);
  CHECK(started_next == took_room);
}

TEST_CASE("with swapping, no operation ever finds the only copy of what it names in the store") {
  // Where each block's contents are, as the decisions move them in order: a loop of twelve 4 MiB
  // tensors on a 16 MiB limit, with a foreach-like launch cut short now and then and tensors
  // returned to the allocator and handed out again.
  enum class At { gpu, host, store };
  constexpr std::uint64_t kTensor = 4 * kMiB;
  LaunchOrderedResidency model(
      16 * kMiB, 4 * kMiB,
      {.prefetch = true, .discard_dead = true, .place_fresh = true, .swap = true, .swap_bytes = 24 * kMiB});
  model.on_range_allocated(kBase, 48 * kMiB);
  std::map<BlockId, At> at;
  const auto move = [&](const std::vector<AddressRange>& ranges, At to, std::optional<At> from) {
    for (const AddressRange& range : ranges) {
      for_each_block_of(range, [&](BlockId b) {
        if (from) CHECK(at[b] == *from);
        at[b] = to;
      });
    }
  };
  std::uint64_t restored = 0;
  for (std::uint64_t step = 0; step < 400; ++step) {
    const std::uint64_t tensor = kBase + (step % 12) * kTensor;
    KernelLaunch launch = launch_naming(tensor, kTensor, kBase + ((step + 5) % 12) * kTensor, kTensor);
    launch.pointers_truncated = step % 37 == 0;
    if (step % 29 == 0) {
      model.on_buffer_returned(tensor, kTensor, 0);
      model.on_buffer_handed_out(tensor, kTensor);  // fresh: the program writes it before reading
      for_each_block_of({tensor, kTensor}, [&](BlockId b) { at[b] = At::gpu; });
    }
    const LaunchEviction decision = model.before_launch(launch);
    move(decision.unswap, At::host, At::store);
    move(decision.swap_out, At::store, At::gpu);
    move(decision.evict, At::host, std::nullopt);
    move(decision.discard, At::host, std::nullopt);
    move(decision.restore, At::gpu, At::store);
    move(decision.place, At::gpu, std::nullopt);
    move(decision.fetch, At::gpu, std::nullopt);
    move(decision.restore_ahead, At::gpu, At::store);
    restored += total_bytes(decision.restore);
    for (std::size_t i = 0; i < launch.pointer_count; ++i)
      for_each_block_of({launch.pointers[i], launch.extents[i]},
                        [&](BlockId b) { CHECK(at[b] != At::store); });
    (void)model.take_released();
  }
  CHECK(restored > 0);
  CHECK(model.stats().restored_ahead_bytes > 0);  // the loop was learned, and copied back ahead
  CHECK(model.stats().unswaps > 0);
  CHECK(model.stats().swap_peak_bytes <= 24 * kMiB);
}

TEST_CASE("the blocks the last operation named, merged within each allocation, for the move log") {
  LaunchOrderedResidency model(64 * kMiB, 4 * kMiB);
  model.on_range_allocated(kBase, 8 * kMiB);
  model.on_range_allocated(kBase + 8 * kMiB, 8 * kMiB);  // adjacent, but another allocation
  // Two pointers into the first allocation whose blocks touch: one range.
  model.before_launch(launch_naming(kBase, 3 * kMiB, kBase + 4 * kMiB, 2 * kMiB));
  CHECK(model.last_named() == std::vector<AddressRange>{{kBase, 6 * kMiB}});
  // Contiguous, but in two allocations: two ranges.
  model.before_launch(launch_naming(kBase + 6 * kMiB, 2 * kMiB, kBase + 8 * kMiB, 2 * kMiB));
  CHECK(model.last_named() ==
        std::vector<AddressRange>{{kBase + 6 * kMiB, 2 * kMiB}, {kBase + 8 * kMiB, 2 * kMiB}});
}
