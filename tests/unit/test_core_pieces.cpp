// The smaller core pieces: registry, budget, deferred frees, PyTorch's alloc conf, the driver
// entry-point table, statistics rendering.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "deepum/core/allocation_budget.hpp"
#include "deepum/core/deferred_free_queue.hpp"
#include "deepum/core/entry_point_table.hpp"
#include "deepum/core/exit_report.hpp"
#include "deepum/core/indirect_kernels.hpp"
#include "deepum/core/managed_registry.hpp"
#include "deepum/core/pytorch_alloc_conf.hpp"
#include "deepum/core/statistics.hpp"
#include "deepum/core/stream_id.hpp"
#include "deepum/core/unenqueued_operations.hpp"

using namespace deepum::core;

TEST_CASE("ManagedRegistry finds the range holding an address and rejects overlaps") {
  ManagedRegistry registry;
  CHECK(registry.insert({0x1000, 0x1000, InterceptedApi::cuda_malloc}));
  CHECK(registry.insert({0x3000, 0x100, InterceptedApi::cu_mem_alloc}));
  CHECK_FALSE(registry.insert({0x1800, 0x10, InterceptedApi::cuda_malloc}));    // inside the first
  CHECK_FALSE(registry.insert({0x0800, 0x1000, InterceptedApi::cuda_malloc}));  // runs into it
  CHECK_FALSE(registry.insert({0x5000, 0, InterceptedApi::cuda_malloc}));
  CHECK(registry.insert({0x2000, 0x1000, InterceptedApi::cuda_malloc}));  // exactly adjacent
  CHECK(registry.find_containing(0x1fff)->base == 0x1000);
  CHECK(registry.find_containing(0x2000)->base == 0x2000);
  CHECK_FALSE(registry.find_containing(0x0fff));
  CHECK_FALSE(registry.find_containing(0x3100));
  CHECK(registry.live_bytes() == 0x2100);
  CHECK_FALSE(registry.erase(0x1004));  // only exact bases are frees
  auto erased = registry.erase(0x1000);
  REQUIRE(erased);
  CHECK(erased->bytes == 0x1000);
  CHECK(registry.live_count() == 2);
  CHECK(registry.snapshot().front().base == 0x2000);
}

TEST_CASE("ManagedRegistry::contains answers as find_containing while ranges come and go") {
  constexpr std::uintptr_t kBlock = std::uintptr_t{2} << 20;
  const std::uintptr_t base = 0x7f0000000000;
  ManagedRegistry registry;
  REQUIRE(registry.insert({base, 3 * kBlock, InterceptedApi::cuda_malloc}));
  for (int ask = 0; ask < 2; ++ask) {  // the second time, remembered
    CHECK(registry.contains(base + kBlock + 5));
    CHECK(registry.contains(base + 3 * kBlock - 1));
    CHECK_FALSE(registry.contains(base + 3 * kBlock));
  }
  // Gone, then another range over part of the same block: its neighbour there is not managed.
  REQUIRE(registry.erase(base));
  CHECK_FALSE(registry.contains(base + kBlock + 5));
  REQUIRE(registry.insert({base + kBlock, 0x1000, InterceptedApi::cuda_malloc}));
  CHECK(registry.contains(base + kBlock + 5));
  CHECK_FALSE(registry.contains(base + kBlock + 0x1000));
  CHECK(registry.contains(base + kBlock + 5));
  // Another registry is not answered from this one's blocks, nor one made where it was.
  ManagedRegistry other;
  CHECK_FALSE(other.contains(base + kBlock + 5));
  CHECK(registry.contains(base + kBlock + 5));
  std::optional<ManagedRegistry> in_place;
  in_place.emplace();
  REQUIRE(in_place->insert({base, kBlock, InterceptedApi::cuda_malloc}));
  CHECK(in_place->contains(base + 5));
  in_place.emplace();  // a new registry in the same place, with as many changes
  REQUIRE(in_place->insert({base + 4 * kBlock, kBlock, InterceptedApi::cuda_malloc}));
  CHECK_FALSE(in_place->contains(base + 5));
}

TEST_CASE("ManagedRegistry stays consistent under concurrent inserts, lookups and erases") {
  ManagedRegistry registry;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&registry, t] {
      const std::uintptr_t base = 0x100000u * static_cast<std::uintptr_t>(t + 1);
      for (int i = 0; i < 1000; ++i) {
        const std::uintptr_t at = base + static_cast<std::uintptr_t>(i % 16) * 0x100;
        CHECK(registry.insert({at, 0x100, InterceptedApi::cuda_malloc}));
        CHECK(registry.find_containing(at + 0x80));
        CHECK(registry.contains(at + 0x80));
        CHECK(registry.erase(at));
        CHECK_FALSE(registry.contains(at + 0x80));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(registry.live_count() == 0);
  CHECK(registry.live_bytes() == 0);
}

// Not under ThreadSanitizer, which follows neither a fork of a threaded state nor a lock made anew
// in place.
#if !defined(__SANITIZE_THREAD__)
TEST_CASE("ManagedRegistry: a child forked with the lock held uses the registry afresh") {
  // What the fork handlers do: the lock is held across fork(), and the child, whose thread is not
  // the one that took it, must not release it (glibc would count the release as a reader's and
  // every later lock would wait for ever, as DataLoader workers did).
  ManagedRegistry registry;
  registry.insert({0x1000, 0x1000, InterceptedApi::cuda_malloc});
  registry.lock_for_fork();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    alarm(10);  // a deadlock ends the child, and the parent sees the signal
    registry.reset_in_child();
    const bool forgotten = !registry.find_containing(0x1800).has_value();
    registry.insert({0x4000, 0x1000, InterceptedApi::cuda_malloc});
    _exit(forgotten && registry.find_containing(0x4800).has_value() ? 0 : 1);
  }
  registry.unlock_after_fork();
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(registry.find_containing(0x1800).has_value());  // the parent's ranges stay the parent's
}
#endif

TEST_CASE("UnenqueuedOperations: the oldest operation a thread has not enqueued, one per thread") {
  UnenqueuedOperations unenqueued;
  constexpr std::uint64_t kNone = 1000;
  CHECK(unenqueued.oldest(kNone) == kNone);
  unenqueued.enqueued();                               // nothing decided: nothing happens
  std::thread([&] { unenqueued.decided(5); }).join();  // a thread that never got its exit
  unenqueued.decided(7);
  CHECK(unenqueued.oldest(kNone) == 5);
  unenqueued.decided(9);  // not enqueued in between (an NCCL group): the older one stays
  CHECK(unenqueued.oldest(kNone) == 5);
  unenqueued.enqueued();
  CHECK(unenqueued.oldest(kNone) == 5);  // another thread's
  CHECK(unenqueued.oldest(3) == 3);
}

TEST_CASE("UnenqueuedOperations: a thread's operation counts until its thread says it is enqueued") {
  UnenqueuedOperations unenqueued;
  std::atomic<std::uint64_t> next{1};
  std::mutex deciding;  // the engine's lock: operations are numbered and recorded under it
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::uint64_t mine = 0;
        {
          std::lock_guard lock(deciding);
          mine = next.fetch_add(1);
          unenqueued.decided(mine);
          if (unenqueued.oldest(UINT64_MAX) > mine) wrong.fetch_add(1);
        }
        if (unenqueued.oldest(UINT64_MAX) > mine) wrong.fetch_add(1);
        unenqueued.enqueued();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(wrong.load() == 0);
  CHECK(unenqueued.oldest(UINT64_MAX) == UINT64_MAX);
}

TEST_CASE("stream ids: each thread's per-thread default stream apart, every other stream its handle") {
  const std::uint64_t mine = stream_id(kPerThreadStreamHandle);
  CHECK(mine != kPerThreadStreamHandle);
  CHECK(stream_id(kPerThreadStreamHandle) == mine);
  CHECK(stream_handle(mine) == kPerThreadStreamHandle);
  std::uint64_t theirs = 0;
  std::thread([&] { theirs = stream_id(kPerThreadStreamHandle); }).join();
  CHECK(theirs != mine);
  CHECK(stream_handle(theirs) == kPerThreadStreamHandle);
  for (std::uint64_t handle : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0x55d0c0a8f0e0}}) {
    CHECK(stream_id(handle) == handle);
    CHECK(stream_handle(handle) == handle);
  }
}

TEST_CASE("AllocationBudget tracks use and peak and refuses overflow") {
  AllocationBudget budget;
  budget.set_limit(100);
  CHECK(budget.try_reserve(60));
  CHECK_FALSE(budget.try_reserve(41));
  CHECK(budget.try_reserve(40));
  budget.release(70);
  CHECK(budget.in_use() == 30);
  CHECK(budget.peak() == 100);
  CHECK_FALSE(budget.try_reserve(UINT64_MAX));
  budget.release(1000);  // saturates instead of wrapping
  CHECK(budget.in_use() == 0);
}

TEST_CASE("DeferredFreeQueue releases only entries whose completion fired") {
  DeferredFreeQueue queue;
  int fired_a = 1, pending_b = 0;
  queue.push({0xa000, &fired_a});
  queue.push({0xb000, &pending_b});
  std::vector<std::uintptr_t> released;
  auto is_done = [](void* completion) { return *static_cast<int*>(completion) != 0; };
  auto release = [&](const DeferredFreeQueue::Entry& e) { released.push_back(e.base); };
  CHECK(queue.reap(is_done, release) == 1);
  CHECK(released == std::vector<std::uintptr_t>{0xa000});
  CHECK(queue.size() == 1);
  pending_b = 1;
  CHECK(queue.reap(is_done, release) == 1);
  CHECK(released.back() == 0xb000);
  CHECK(queue.size() == 0);
}

TEST_CASE("expandable_segments is removed from PyTorch's allocator settings") {
  CHECK(without_expandable_segments("expandable_segments:True") == std::string{});
  CHECK(without_expandable_segments("expandable_segments:True,max_split_size_mb:128") ==
        std::string("max_split_size_mb:128"));
  CHECK(without_expandable_segments("max_split_size_mb:128, expandable_segments : true") ==
        std::string("max_split_size_mb:128"));
  CHECK_FALSE(without_expandable_segments("expandable_segments:False"));
  CHECK_FALSE(without_expandable_segments("max_split_size_mb:128"));
  CHECK_FALSE(without_expandable_segments(""));
}

namespace {
struct TestEntry {
  EntryPointSpec spec;
  int id;
};
const TestEntry kEntries[] = {
    {{"cuMemAlloc_v2", "cuMemAlloc", 3020, kNoMaxVersion, StreamVariant::not_applicable}, 1},
    {{"cuMemAllocAsync", "cuMemAllocAsync", 11020, kNoMaxVersion, StreamVariant::legacy}, 2},
    {{"cuMemAllocAsync_ptsz", "cuMemAllocAsync", 11020, kNoMaxVersion, StreamVariant::per_thread}, 3},
    {{"cuGetProcAddress_v2", "cuGetProcAddress", 12000, kNoMaxVersion, StreamVariant::not_applicable}, 4},
    {{"cuGetProcAddress", "cuGetProcAddress", 11030, 12000, StreamVariant::not_applicable}, 5},
};
int proc(const char* symbol, int version, bool per_thread) {
  const TestEntry* e =
      find_by_proc_address(std::span<const TestEntry>(kEntries), symbol, version, per_thread);
  return e ? e->id : 0;
}
}  // namespace

TEST_CASE("cuGetProcAddress lookups map to the variant the driver hands out") {
  CHECK(proc("cuMemAlloc", 13000, false) == 1);
  CHECK(proc("cuMemAlloc", 13000, true) == 1);  // no stream variants: the flag does not matter
  CHECK(proc("cuMemAlloc", 3010, false) == 0);  // v1, 32-bit sizes: not ours
  CHECK(proc("cuMemAllocAsync", 12000, false) == 2);
  CHECK(proc("cuMemAllocAsync", 12000, true) == 3);
  CHECK(proc("cuMemAllocAsync", 11000, true) == 0);
  CHECK(proc("cuGetProcAddress", 13000, false) == 4);
  CHECK(proc("cuGetProcAddress", 11080, false) == 5);
  CHECK(proc("cuLaunchKernel", 13000, false) == 0);
  const TestEntry* e = find_by_exported_name(std::span<const TestEntry>(kEntries), "cuMemAllocAsync_ptsz");
  REQUIRE(e);
  CHECK(e->id == 3);
  CHECK_FALSE(find_by_exported_name(std::span<const TestEntry>(kEntries), "cuMemAlloc"));
}

TEST_CASE("statistics render as a summary and as JSON") {
  Statistics stats;
  stats.count_call(InterceptedApi::cuda_malloc);
  stats.count_call(InterceptedApi::cuda_malloc);
  stats.count_allocated(InterceptedApi::cuda_malloc, 3ull << 30);
  stats.count_refused(InterceptedApi::cuda_malloc);
  stats.count_entry_point_via_dlsym();
  ExitReport report;
  report.process = "pid 1, test";
  report.config_origin = "defaults";
  report.allocations = stats.snapshot();
  report.allocations.alloc_limit_bytes = 8ull << 30;
  report.allocations.peak_managed_bytes = 3ull << 30;
  const std::string summary = render_summary(report);
  CHECK(summary.find("cudaMalloc 2 (1 refused, 0 failed)") != std::string::npos);
  CHECK(summary.find("peak 3.00 GiB") != std::string::npos);
  CHECK(summary.find("allocation 8.00 GiB") != std::string::npos);
  CHECK(summary.find("cuMemAlloc ") == std::string::npos);  // APIs never called are left out
  const auto json = nlohmann::json::parse(render_json(report));
  CHECK(json["schema_version"] == kStatsSchemaVersion);
  CHECK(json["calls"]["cudaMalloc"]["calls"] == 2);
  CHECK(json["calls"]["cudaMalloc"]["refused"] == 1);
  CHECK(json["managed_allocations"] == 1);
  CHECK(json["entry_points_via_dlsym"] == 1);
  CHECK(format_bytes(512) == "512 B");
  CHECK(format_bytes(1536) == "1.50 KiB");
}

TEST_CASE("NCCL's kernels are known to reach buffers their parameters do not name") {
  // Names as CUPTI gives them: NCCL's kernels are C++, so mangled; older NCCL named them ncclKernel_.
  CHECK(reaches_buffers_indirectly(
      "_Z29ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
  CHECK(reaches_buffers_indirectly("ncclDevKernel_Generic"));
  CHECK(reaches_buffers_indirectly("_Z37ncclKernel_AllReduce_RING_LL_Sum_floatP11ncclDevComm"));
  CHECK_FALSE(reaches_buffers_indirectly("ampere_sgemm_128x64_nn"));
  CHECK_FALSE(
      reaches_buffers_indirectly("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEE"));
  CHECK_FALSE(reaches_buffers_indirectly("nccl_like_user_kernel"));
  CHECK_FALSE(reaches_buffers_indirectly(""));
}

TEST_CASE("an NCCL call names its buffers by collective, type and ranks") {
  constexpr int kFloat32 = 7, kBfloat16 = 9, kInt8 = 0;
  constexpr std::uint64_t kSend = 0x7f0000000000, kRecv = 0x7f0100000000;
  SUBCASE("element sizes follow ncclDataType_t; an unknown type is unknown") {
    CHECK(nccl_element_bytes(kInt8) == 1);
    CHECK(nccl_element_bytes(kFloat32) == 4);
    CHECK(nccl_element_bytes(kBfloat16) == 2);
    CHECK(nccl_element_bytes(8) == 8);  // float64
    CHECK(nccl_element_bytes(12) == 0);
    CHECK(nccl_element_bytes(-1) == 0);
  }
  SUBCASE("an all-reduce names both buffers, an in-place one its buffer once") {
    const CollectiveBuffers out_of_place =
        collective_buffers(Collective::all_reduce, kSend, kRecv, 1000, kFloat32, 8);
    REQUIRE(out_of_place.known);
    REQUIRE(out_of_place.count == 2);
    CHECK(out_of_place.buffers[0] == AddressRange{kSend, 4000});
    CHECK(out_of_place.buffers[1] == AddressRange{kRecv, 4000});
    const CollectiveBuffers in_place =
        collective_buffers(Collective::all_reduce, kSend, kSend, 1000, kFloat32, 8);
    REQUIRE(in_place.count == 1);
    CHECK(in_place.buffers[0] == AddressRange{kSend, 4000});
  }
  SUBCASE("gathers and scatters span every rank's part on one side") {
    const CollectiveBuffers gather =
        collective_buffers(Collective::all_gather, kSend, kRecv, 10, kBfloat16, 4);
    REQUIRE(gather.count == 2);
    CHECK(gather.buffers[0].bytes == 20);
    CHECK(gather.buffers[1].bytes == 80);
    const CollectiveBuffers scatter =
        collective_buffers(Collective::reduce_scatter, kSend, kRecv, 10, kBfloat16, 4);
    CHECK(scatter.buffers[0].bytes == 80);
    CHECK(scatter.buffers[1].bytes == 20);
    const CollectiveBuffers all_to_all =
        collective_buffers(Collective::all_to_all, kSend, kRecv, 10, kInt8, 3);
    CHECK(all_to_all.buffers[0].bytes == 30);
    CHECK(all_to_all.buffers[1].bytes == 30);
  }
  SUBCASE("point to point names one buffer") {
    const CollectiveBuffers send = collective_buffers(Collective::send, kSend, kRecv, 5, kFloat32, 0);
    REQUIRE(send.count == 1);
    CHECK(send.buffers[0] == AddressRange{kSend, 20});
    const CollectiveBuffers recv = collective_buffers(Collective::recv, 0, kRecv, 5, kFloat32, 0);
    REQUIRE(recv.count == 1);
    CHECK(recv.buffers[0] == AddressRange{kRecv, 20});
  }
  SUBCASE("what cannot be told is unknown: a type, the ranks, a size past 64 bits") {
    CHECK_FALSE(collective_buffers(Collective::all_reduce, kSend, kRecv, 10, 42, 2).known);
    CHECK_FALSE(collective_buffers(Collective::all_gather, kSend, kRecv, 10, kFloat32, 0).known);
    CHECK_FALSE(
        collective_buffers(Collective::all_reduce, kSend, kRecv, ~std::uint64_t{0} / 2, kFloat32, 2).known);
    CHECK_FALSE(
        collective_buffers(Collective::all_to_all, kSend, kRecv, std::uint64_t{1} << 60, kInt8, 64).known);
    // An all-reduce needs no rank count; nothing to move is known.
    CHECK(collective_buffers(Collective::all_reduce, kSend, kRecv, 10, kFloat32, 0).known);
    const CollectiveBuffers empty = collective_buffers(Collective::all_gather, kSend, kRecv, 0, 42, 0);
    CHECK(empty.known);
    CHECK(empty.count == 0);
  }
}

TEST_CASE("the collective call scope is the calling thread's, and nests") {
  CHECK_FALSE(CollectiveCallScope::active());
  {
    const CollectiveCallScope group;
    {
      const CollectiveCallScope call;
      CHECK(CollectiveCallScope::active());
    }
    CHECK(CollectiveCallScope::active());
    bool elsewhere = true;
    std::thread([&] { elsewhere = CollectiveCallScope::active(); }).join();
    CHECK_FALSE(elsewhere);
  }
  CHECK_FALSE(CollectiveCallScope::active());
}
