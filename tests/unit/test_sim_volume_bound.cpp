// Belady's MIN volume (sim/volume_bound.hpp) on hand-built workloads: nothing moves when all fits
// or on first touch, a cyclic loop moves what MIN must, a block that dies before its next use (its
// range freed or its buffers returned) leaves and returns for nothing, only the window counts, and a
// damaged trace's huge buffer costs no more than the workload's blocks. Then a block's next use,
// and what a replay's victims cost: by when they are named again, and those that die first.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "deepum/sim/volume_bound.hpp"

using namespace deepum;
using namespace deepum::sim;

namespace {

constexpr std::uint64_t kBlock = core::kBlockBytes;
constexpr std::uint64_t kBase = std::uint64_t{1} << 30;  // block i is at kBase + i * 2 MB

// One operation per entry, naming the listed blocks, over `blocks` blocks.
Workload operations(const std::vector<std::vector<BlockIndex>>& named, std::uint32_t blocks) {
  Workload w;
  for (std::uint32_t b = 0; b < blocks; ++b) w.block_ids.push_back((kBase >> 21) + b);
  w.touch_set_offsets.push_back(0);
  for (const std::vector<BlockIndex>& set : named) {
    KernelStep step;
    step.touch_set = static_cast<std::uint32_t>(w.touch_set_offsets.size() - 1);
    w.kernels.push_back(step);
    w.touches.insert(w.touches.end(), set.begin(), set.end());
    w.touch_set_offsets.push_back(static_cast<std::uint32_t>(w.touches.size()));
  }
  return w;
}

// The loop A B C, `times` times, one block an operation.
Workload cycle(int times) {
  std::vector<std::vector<BlockIndex>> named;
  for (int i = 0; i < times; ++i) named.insert(named.end(), {{0}, {1}, {2}});
  return operations(named, 3);
}

}  // namespace

TEST_CASE("nothing moves where everything fits, and a first touch is fresh") {
  const VolumeBound fits = belady_volume(cycle(4), 3);
  CHECK(fits.to_gpu_bytes == 0);
  CHECK(fits.to_host_bytes == 0);
  // One pass over more blocks than fit: each is named once, so nothing is read back.
  const VolumeBound once = belady_volume(operations({{0}, {1}, {2}, {3}}, 4), 2);
  CHECK(once.to_gpu_bytes == 0);
  CHECK(once.to_host_bytes == 0);
}

TEST_CASE("a cyclic loop over three blocks with room for two misses every other operation") {
  // After the first pass MIN keeps the block named next and evicts the one named last-but-one:
  // each miss brings one block back and writes one out, one miss every two operations ((n - c) /
  // (n - 1) for n blocks and room for c). The last pass's victims are never read again: free.
  const VolumeBound four = belady_volume(cycle(4), 2);  // misses at operations 4, 6, 8 and 10
  CHECK(four.to_gpu_bytes == 4 * kBlock);
  CHECK(four.to_host_bytes == 4 * kBlock);
  const VolumeBound five = belady_volume(cycle(5), 2);  // ... and 12 and 14
  CHECK(five.to_gpu_bytes == 6 * kBlock);
  CHECK(five.to_host_bytes == 6 * kBlock);
}

TEST_CASE("only the operations from the window on are counted") {
  const Workload w = cycle(4);
  CHECK(belady_volume(w, 2, 6).to_gpu_bytes == 3 * kBlock);  // the misses at 6, 8 and 10
  CHECK(belady_volume(w, 2, 12).to_gpu_bytes == 0);
}

TEST_CASE("a block that dies before its next use leaves and comes back for nothing") {
  // A B C A B with room for two: at C, MIN writes B out (A is named sooner) and reads it back at
  // the last operation.
  const Workload plain = operations({{0}, {1}, {2}, {0}, {1}}, 3);
  CHECK(belady_volume(plain, 2).to_gpu_bytes == kBlock);
  CHECK(belady_volume(plain, 2).to_host_bytes == kBlock);
  // B's range freed before the last operation: what it held is never read, so nothing moves.
  Workload freed = plain;
  freed.releases.push_back({4, 1, 1});
  CHECK(belady_volume(freed, 2).to_gpu_bytes == 0);
  CHECK(belady_volume(freed, 2).to_host_bytes == 0);
  // The same through the allocator: B's only buffer returned, then handed out again (written
  // before it is read).
  Workload returned = plain;
  returned.host_events = {{0, HostEvent::Kind::buffer_handed_out, kBase + kBlock, kBlock, 7},
                          {4, HostEvent::Kind::buffer_returned, kBase + kBlock, kBlock, 7},
                          {4, HostEvent::Kind::buffer_handed_out, kBase + kBlock, kBlock, 7}};
  CHECK(belady_volume(returned, 2).to_gpu_bytes == 0);
  CHECK(belady_volume(returned, 2).to_host_bytes == 0);
  // A block still holding another live buffer does not die.
  Workload shared = returned;
  shared.host_events.insert(shared.host_events.begin(),
                            {0, HostEvent::Kind::buffer_handed_out, kBase + kBlock + kBlock / 2, 4096, 7});
  CHECK(belady_volume(shared, 2).to_gpu_bytes == kBlock);
  CHECK(belady_volume(shared, 2).to_host_bytes == kBlock);
}

TEST_CASE("a buffer as large as the address space costs no more than the workload's blocks") {
  // A damaged trace's buffer: every block dies when it is returned, and the count ends.
  Workload huge = operations({{0}, {1}, {2}, {0}, {1}}, 3);
  const std::uint64_t all = std::numeric_limits<std::uint64_t>::max();
  huge.host_events = {{0, HostEvent::Kind::buffer_handed_out, 0, all, 7},
                      {4, HostEvent::Kind::buffer_returned, 0, all, 7}};
  CHECK(belady_volume(huge, 2).to_gpu_bytes == 0);
  CHECK(belady_volume(huge, 2).to_host_bytes == 0);
}

TEST_CASE("a block's next use: its next naming, or its death where that comes first") {
  Workload w = operations({{0}, {1}, {0}, {2}, {1}, {2}}, 3);
  w.releases.push_back({3, 1, 1});  // B's range freed before operation 3, named again at 4
  const BlockTimes t = block_times(w);
  CHECK(t.next_use(0, 0) == 2);
  CHECK(t.next_use(0, 2) == BlockTimes::kNever);  // neither named again nor dead
  CHECK(t.next_use(1, 1) == 3);                   // dies before 3
  CHECK(t.next_use(1, 3) == 4);
  CHECK(t.next_use(2, 3) == 5);
}

TEST_CASE("victims by when the trace names them next, and those that die first") {
  // A B C, A at 3, then D 70 times, B at 74, then E 1,030 times, C at 1105; F never named.
  std::vector<std::vector<BlockIndex>> named{{0}, {1}, {2}, {0}};
  named.insert(named.end(), 70, {3});
  named.push_back({1});
  named.insert(named.end(), 1030, {4});
  named.push_back({2});
  Workload w = operations(named, 6);
  using Cause = EvictionRecord::Cause;
  const std::vector<EvictionRecord> evictions{
      {2, 0, Cause::hint},      // A, named again 1 operation later
      {2, 1, Cause::fault},     // B, 72 later
      {3, 2, Cause::prefetch},  // C, 1,102 later
      {3, 2, Cause::discard},   // dropped: no cost
      {4, 5, Cause::hint},      // F: never named again
  };
  const VictimCost cost = victim_cost(w, evictions);
  CHECK(cost.written_bytes == 4 * kBlock);
  CHECK(cost.soon_bytes == kBlock);
  CHECK(cost.within_bytes == kBlock);
  CHECK(cost.later_bytes == kBlock);
  CHECK(cost.never_bytes == kBlock);
  CHECK(cost.died_first_bytes == 0);
  // Only the evictions from the window on.
  const VictimCost window = victim_cost(w, evictions, 3);
  CHECK(window.written_bytes == 2 * kBlock);
  CHECK(window.later_bytes == kBlock);
  CHECK(window.never_bytes == kBlock);
  // B's range freed before it is named again: written for nothing. A freed before operation 2,
  // where it was evicted: it died before the eviction, which wrote it for nothing as well.
  w.releases = {{50, 1, 1}, {2, 0, 1}};
  const VictimCost died = victim_cost(w, evictions);
  CHECK(died.died_first_bytes == 2 * kBlock);
  CHECK(died.soon_bytes == 0);
  CHECK(died.within_bytes == 0);
  CHECK(died.written_bytes == 4 * kBlock);
}
