// Stress tests of the core pieces that several threads share: program threads (launches,
// allocations, frees), CUPTI's thread (records) and deepum's worker, all at once. Each case runs
// its threads for a fixed time and then checks that nothing was lost, duplicated or torn. Built
// in the normal build and under ThreadSanitizer (DEEPUM_TSAN), which reports any data race the
// interleavings reach.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "deepum/core/allocation_service.hpp"
#include "deepum/core/deferred_free_queue.hpp"
#include "deepum/core/event_pipeline.hpp"
#include "deepum/core/launch_queue.hpp"
#include "deepum/core/live_buffers.hpp"
#include "deepum/core/managed_registry.hpp"

using namespace deepum;
using namespace deepum::core;

namespace {

// Long enough to interleave the threads many times, short enough that the suite takes a few
// seconds also under ThreadSanitizer.
constexpr auto kRunFor = std::chrono::milliseconds(300);
constexpr std::uint64_t kMiB = 1ull << 20;

// Runs body(stop) on `count` threads until kRunFor has passed, then joins them.
template <typename Body>
void run_threads(int count, Body body) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < count; ++i) threads.emplace_back([&body, &stop, i] { body(i, stop); });
  std::this_thread::sleep_for(kRunFor);
  stop.store(true);
  for (auto& thread : threads) thread.join();
}

bool stopped(const std::atomic<bool>& stop) { return stop.load(std::memory_order_relaxed); }

// Launch ids carry their producer and their order: producer * 2^32 + sequence.
KernelLaunch launch_of(std::uint64_t producer, std::uint64_t sequence) {
  KernelLaunch launch;
  launch.correlation_id = (producer << 32) | sequence;
  return launch;
}

// What a consumer saw of each producer: every launch once, in order, or dropped.
struct LaunchLedger {
  std::map<std::uint64_t, std::uint64_t> next;  // producer -> the sequence it must send next
  std::uint64_t received = 0;
  bool in_order = true;

  void take(const KernelLaunch& launch) {
    const std::uint64_t producer = launch.correlation_id >> 32, sequence = launch.correlation_id & 0xffffffff;
    std::uint64_t& expected = next[producer];
    if (sequence < expected) in_order = false;  // a repeat, or out of order
    expected = sequence + 1;
    ++received;
  }
};

}  // namespace

TEST_CASE("stress: launches from threads that come and go reach one consumer exactly once") {
  LaunchQueue queue;
  std::atomic<std::uint64_t> pushed{0}, next_producer{1};
  std::atomic<bool> producers_done{false};
  LaunchLedger ledger;
  std::thread consumer([&] {
    while (!producers_done.load()) queue.drain([&](const KernelLaunch& l) { ledger.take(l); });
    queue.drain([&](const KernelLaunch& l) { ledger.take(l); });
  });
  run_threads(3, [&](int, const std::atomic<bool>& stop) {
    std::mt19937 random(static_cast<std::uint32_t>(next_producer.load()));
    while (!stopped(stop)) {
      // A short-lived launching thread, as a data loader or a thread pool makes them.
      const std::uint64_t producer = next_producer.fetch_add(1);
      const std::uint64_t launches = 1 + random() % 300;
      std::thread([&queue, &pushed, producer, launches] {
        for (std::uint64_t i = 0; i < launches; ++i) queue.push(launch_of(producer, i));
        pushed.fetch_add(launches);
      }).join();
    }
  });
  producers_done.store(true);
  consumer.join();
  CHECK(next_producer.load() > 10);
  CHECK(ledger.in_order);
  CHECK(ledger.received + queue.dropped() == pushed.load());
  CHECK(queue.dropped() == 0);           // 300 launches never fill a ring
  CHECK(queue.producer_threads() == 0);  // every producer exited and was drained: rings freed
  CHECK(ledger.next.size() + 1 == next_producer.load());
}

TEST_CASE("stress: registry lookups see whole ranges while others insert and erase") {
  ManagedRegistry registry;
  constexpr std::uintptr_t kStableBase = 0x100000000, kChurnBase = 0x200000000, kArea = 0x10000000;
  constexpr int kStable = 64;
  for (int i = 0; i < kStable; ++i)
    REQUIRE(registry.insert(
        {kStableBase + static_cast<std::uintptr_t>(i) * kMiB, kMiB / 2, InterceptedApi::cuda_malloc}));
  std::atomic<bool> torn{false};
  std::atomic<std::uint64_t> lookups{0};
  run_threads(5, [&](int index, const std::atomic<bool>& stop) {
    std::mt19937 random(static_cast<std::uint32_t>(index));
    if (index < 2) {  // allocating threads, each in its own part of the address space
      const std::uintptr_t area = kChurnBase + static_cast<std::uintptr_t>(index) * kArea;
      while (!stopped(stop)) {
        const std::uintptr_t base = area + (random() % 256) * kMiB;
        if (registry.insert({base, kMiB, InterceptedApi::cu_mem_alloc})) registry.erase(base);
      }
      return;
    }
    while (!stopped(stop)) {  // launch callbacks scanning pointers, and the exit report
      const std::uintptr_t stable = kStableBase + (random() % kStable) * kMiB + random() % (kMiB / 2);
      const auto hit = registry.find_containing(stable);
      if (!hit || !hit->contains(stable) || hit->bytes != kMiB / 2) torn = true;
      const std::uintptr_t churn = kChurnBase + (random() % (2 * 256)) * kMiB + random() % kMiB;
      if (const auto found = registry.find_containing(churn);
          found && (!found->contains(churn) || found->bytes != kMiB))
        torn = true;
      if (random() % 64 == 0) {
        const std::vector<ManagedRange> ranges = registry.snapshot();
        for (std::size_t i = 1; i < ranges.size(); ++i)
          if (ranges[i - 1].base + ranges[i - 1].bytes > ranges[i].base) torn = true;
      }
      lookups.fetch_add(1, std::memory_order_relaxed);
    }
  });
  CHECK_FALSE(torn.load());
  CHECK(lookups.load() > 0);
  CHECK(registry.live_count() == kStable);
  CHECK(registry.live_bytes() == kStable * (kMiB / 2));
}

TEST_CASE("stress: allocations and frees from many threads never pass the limit together") {
  enum class Status { ok, oom };
  constexpr StatusCodes<Status> kCodes{Status::ok, Status::oom};
  constexpr std::uint64_t kLimit = 256 * kMiB;
  config::Config config;
  config.alloc_limit = config::SizeSpec::of_bytes(kLimit);
  Statistics stats;
  ManagedRegistry registry;
  AllocationService service(config, stats, registry);
  service.resolve_limits(1024 * kMiB);
  std::atomic<std::uintptr_t> next_address{0x7f0000000000};
  std::atomic<std::uint64_t> allocations{0}, frees{0};
  std::atomic<bool> over{false};
  run_threads(6, [&](int index, const std::atomic<bool>& stop) {
    std::mt19937 random(static_cast<std::uint32_t>(index));
    std::vector<std::uintptr_t> live;
    auto free_one = [&] {
      service.free(
          InterceptedApi::cuda_free, live.back(), kCodes, [](const ManagedRange&) { return Status::ok; },
          [](std::uintptr_t) { return Status::ok; });
      live.pop_back();
      frees.fetch_add(1, std::memory_order_relaxed);
    };
    while (!stopped(stop)) {
      if (index == 5) {  // cudaMemGetInfo while the others allocate
        const DeviceMemoryInfo view = service.device_view();
        if (view.total_bytes != kLimit || view.free_bytes > kLimit) over = true;
        continue;
      }
      if (live.size() >= 8 || (!live.empty() && random() % 2 == 0)) {
        free_one();
        continue;
      }
      std::uintptr_t base = 0;
      const Status status = service.allocate(
          InterceptedApi::cuda_malloc, (1 + random() % 16) * kMiB, &base, kCodes,
          [&](std::uint64_t bytes, std::uintptr_t* out) {
            *out = next_address.fetch_add(bytes);
            return Status::ok;
          },
          [](const Refusal&) {});
      if (service.managed_bytes_in_use() > kLimit) over = true;
      if (status == Status::ok) {
        live.push_back(base);
        allocations.fetch_add(1, std::memory_order_relaxed);
      }
    }
    while (!live.empty()) free_one();
  });
  CHECK_FALSE(over.load());
  CHECK(allocations.load() > 0);
  CHECK(allocations.load() == frees.load());
  CHECK(service.managed_bytes_in_use() == 0);
  CHECK(service.peak_managed_bytes() <= kLimit);
  CHECK(registry.live_count() == 0);
  CHECK(service.snapshot().managed_allocations == allocations.load());
}

TEST_CASE("stress: stream-ordered frees are released once each, after their event fired") {
  DeferredFreeQueue queue;
  constexpr std::size_t kEntries = 1 << 14;
  // Fired by a thread standing in for the GPU; deleted only after every thread has joined.
  auto fired = std::make_unique<std::atomic<bool>[]>(kEntries);
  auto released = std::make_unique<std::atomic<int>[]>(kEntries);
  std::atomic<std::size_t> next_entry{0}, fired_up_to{0};
  std::atomic<bool> early{false};
  auto reap = [&] {
    return queue.reap([](void* completion) { return static_cast<std::atomic<bool>*>(completion)->load(); },
                      [&](const DeferredFreeQueue::Entry& entry) {
                        if (!fired[entry.base].load()) early = true;
                        released[entry.base].fetch_add(1);
                      });
  };
  run_threads(5, [&](int index, const std::atomic<bool>& stop) {
    while (!stopped(stop)) {
      if (index < 2) {  // cudaFreeAsync on two program threads
        const std::size_t entry = next_entry.fetch_add(1);
        if (entry >= kEntries) return;
        queue.push({entry, &fired[entry]});
      } else if (index == 2) {  // the GPU reaching the events
        const std::size_t upto = std::min(next_entry.load(), kEntries);
        for (std::size_t i = fired_up_to.load(); i < upto; ++i) fired[i].store(true);
        fired_up_to.store(upto);
      } else {  // later allocations and frees reap on their own threads
        reap();
      }
    }
  });
  const std::size_t pushed = std::min(next_entry.load(), kEntries);
  for (std::size_t i = 0; i < pushed; ++i) fired[i].store(true);
  reap();
  CHECK(pushed > 0);
  CHECK(queue.size() == 0);
  CHECK_FALSE(early.load());
  std::size_t once = 0;
  for (std::size_t i = 0; i < pushed; ++i)
    if (released[i].load() == 1) ++once;
  CHECK(once == pushed);
}

TEST_CASE("stress: the pipeline's inboxes take events from every thread while the worker steps") {
  PipelineOptions options;
  options.resident_limit_bytes = 64 * kMiB;
  options.enforce_resident_limit = true;
  EventPipeline pipeline(options);
  constexpr std::uint64_t kBase = 0x7f0000000000;
  pipeline.on_range({RangeEvent::Kind::allocated, 0, kBase, 256 * kMiB});
  std::atomic<std::uint64_t> launched{0}, executed{0}, next_producer{1}, gpu_clock{1};
  std::atomic<bool> program_done{false}, overcounted{false};
  std::thread worker([&] {
    for (std::uint64_t steps = 1; !program_done.load(); ++steps) {
      // Kernel records pause and resume, as the worker does after a second without faults.
      if (steps % 16 == 0) pipeline.set_kernel_records_paused(steps % 32 == 0);
      pipeline.step(gpu_clock.load(), nullptr);
      std::this_thread::sleep_for(std::chrono::microseconds(50));  // the worker's period, shortened
    }
    pipeline.step(gpu_clock.load(), nullptr, /*final=*/true);
  });
  run_threads(4, [&](int index, const std::atomic<bool>& stop) {
    std::mt19937 random(static_cast<std::uint32_t>(index));
    while (!stopped(stop)) {
      const std::uint64_t address = kBase + (random() % 128) * 2 * kMiB;
      if (index == 0) {  // CUPTI's activity thread: one kernel every 10 us of GPU time, a fault in it
        const Timestamp start = gpu_clock.fetch_add(10'000);
        pipeline.on_execution({launched.load(), start, start + 5'000, 7, 0, GpuOperation::kernel, 0, 0});
        executed.fetch_add(1, std::memory_order_relaxed);
        pipeline.on_fault({start + 1'000, start + 2'000, address, 1, FaultAccess::read, 0});
        pipeline.on_migration({start + 1'000, start + 2'000, address, 2 * kMiB,
                               MigrationDirection::host_to_device, MigrationCause::user});
        std::this_thread::sleep_for(std::chrono::microseconds(20));  // CUPTI hands records over in buffers
      } else if (index == 1) {  // the stats reader at exit, and the allocation hooks
        const PipelineStats stats = pipeline.stats();
        if (stats.launches > launched.load()) overcounted = true;
        const Timestamp now = gpu_clock.load();
        pipeline.on_buffer_event({BufferEvent::Kind::handed_out, now, address, kMiB, 7});
        pipeline.on_eviction_done({address, 2 * kMiB}, now);
        std::this_thread::sleep_for(std::chrono::microseconds(20));
      } else {  // launching threads that come and go
        const std::uint64_t producer = next_producer.fetch_add(1);
        std::thread([&, producer, address] {
          for (std::uint64_t i = 0; i < 50; ++i) {
            KernelLaunch launch = launch_of(producer, i);
            launch.pointer_count = 1;
            launch.pointers[0] = address;
            launched.fetch_add(1);  // before the push: the count never trails what was handled
            pipeline.on_launch(launch);
          }
          pipeline.on_function_name(producer, "kernel");
          pipeline.on_copy_launch({});
        }).join();
      }
    }
  });
  program_done.store(true);
  worker.join();
  const PipelineStats stats = pipeline.stats();
  CHECK_FALSE(overcounted.load());
  CHECK(launched.load() > 0);
  CHECK(stats.launches + stats.launches_dropped == launched.load());
  CHECK(stats.launches_dropped == 0);
  CHECK(stats.executions == executed.load());
}

TEST_CASE("stress: live buffers answer whole sizes while others hand out and take back") {
  LiveBuffers buffers;
  constexpr std::uint64_t kStable = 0x100000000, kChurn = 0x200000000;
  for (std::uint64_t i = 0; i < 64; ++i) buffers.handed_out(kStable + i * kMiB, kMiB / 2);
  std::atomic<bool> torn{false};
  run_threads(4, [&](int index, const std::atomic<bool>& stop) {
    std::mt19937 random(static_cast<std::uint32_t>(index));
    while (!stopped(stop)) {
      if (index < 2) {  // PyTorch's allocator on two threads
        const std::uint64_t address =
            kChurn + (static_cast<std::uint64_t>(index) * 256 + random() % 256) * kMiB;
        buffers.handed_out(address, kMiB);
        buffers.returned(address);
        continue;
      }
      const std::uint64_t offset = random() % (kMiB / 2);
      if (buffers.bytes_from(kStable + (random() % 64) * kMiB + offset) != kMiB / 2 - offset) torn = true;
      const std::uint64_t churn = buffers.bytes_from(kChurn + (random() % 512) * kMiB + offset);
      if (churn != 0 && churn != kMiB - offset) torn = true;
    }
  });
  CHECK_FALSE(torn.load());
  CHECK(buffers.size() == 64);
}
