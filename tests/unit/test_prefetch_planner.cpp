// PrefetchPlanner on fabricated training loops: what it predicts, how it coalesces, and, against a
// simulated GPU memory, that its plans keep under the limit and remove the demand misses.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "deepum/prefetch/prefetch_planner.hpp"

using namespace deepum::prefetch;
using deepum::core::block_base;
using deepum::core::block_of;
using deepum::core::kBlockBytes;
using deepum::core::KernelLaunch;

namespace {

constexpr BlockId kFirstBlock = block_of(0x7f0000000000);

// One kernel of a fabricated loop: its execution key, the blocks it touches in order, and how many
// of those (the first ones) its arguments point into; the rest only show up as faults.
struct Kernel {
  std::uint64_t key = 0;
  std::vector<BlockId> blocks;
  std::size_t pointer_blocks = 1;
};

// `count` kernels of `blocks_each` blocks, each kernel's blocks contiguous and right after the
// previous kernel's: one training iteration's worth of distinct tensors.
std::vector<Kernel> make_loop(std::size_t count, std::size_t blocks_each, std::uint64_t key_base,
                              BlockId first_block, std::size_t pointer_blocks = 1) {
  std::vector<Kernel> loop(count);
  for (std::size_t i = 0; i < count; ++i) {
    loop[i].key = key_base + i;
    loop[i].pointer_blocks = pointer_blocks;
    for (std::size_t b = 0; b < blocks_each; ++b) loop[i].blocks.push_back(first_block + i * blocks_each + b);
  }
  return loop;
}

std::vector<BlockId> flatten(const std::vector<AddressRange>& ranges) {
  std::vector<BlockId> blocks;
  for (const AddressRange& range : ranges) {
    for (std::uint64_t offset = 0; offset < range.bytes; offset += kBlockBytes) {
      blocks.push_back(block_of(range.address + offset));
    }
  }
  return blocks;
}

// Drives the planner the way the worker will: launch, then completion with the faulted blocks.
struct Driver {
  PrefetchPlanner planner;
  std::uint64_t next_correlation = 1;

  explicit Driver(const PrefetchOptions& options = {}) : planner(options) {}

  std::uint64_t launch(const Kernel& kernel) {
    KernelLaunch launch;
    launch.correlation_id = next_correlation++;
    launch.execution_key = kernel.key;
    launch.pointer_count = static_cast<std::uint16_t>(kernel.pointer_blocks);
    for (std::size_t i = 0; i < kernel.pointer_blocks; ++i)
      launch.pointers[i] = block_base(kernel.blocks[i]) + 4096;
    planner.on_launch(launch);
    return launch.correlation_id;
  }
  void complete(std::uint64_t correlation, const std::vector<BlockId>& faulted) {
    planner.on_kernel_complete(correlation, faulted);
  }
  // Without residency: every block faults.
  void run(const Kernel& kernel) { complete(launch(kernel), kernel.blocks); }
};

// The share of the blocks the kernels sequence[from, from + n) touch that `predicted` holds.
double coverage(const std::vector<BlockId>& predicted, const std::vector<const Kernel*>& sequence,
                std::size_t from, std::size_t n) {
  const std::set<BlockId> have(predicted.begin(), predicted.end());
  std::size_t total = 0, hit = 0;
  for (std::size_t k = from; k < std::min(sequence.size(), from + n); ++k) {
    for (BlockId block : sequence[k]->blocks) {
      ++total;
      hit += have.count(block);
    }
  }
  return total == 0 ? 1.0 : static_cast<double>(hit) / static_cast<double>(total);
}

// GPU memory as the test sees it: `capacity` blocks, LRU order by last touch, and a driver that
// evicts the least recently used block when a demand fault finds memory full.
class SimulatedGpu final : public ResidencyView {
 public:
  explicit SimulatedGpu(std::size_t capacity) : capacity_(capacity) {}

  bool is_resident(BlockId block) const override { return stamp_.count(block) != 0; }
  std::uint64_t resident_bytes() const override { return stamp_.size() * kBlockBytes; }
  std::uint64_t limit_bytes() const override { return capacity_ * kBlockBytes; }
  void visit_least_recently_used(const std::function<bool(BlockId)>& visit) const override {
    for (const auto& [time, block] : lru_) {
      if (!visit(block)) return;
    }
  }

  void apply(const Plan& plan) {
    for (BlockId block : flatten(plan.evict)) {
      REQUIRE(is_resident(block));  // the planner only evicts what is there
      remove(block);
    }
    for (BlockId block : flatten(plan.prefetch)) {
      REQUIRE_FALSE(is_resident(block));  // nor prefetches what is there
      insert(block);
      ++prefetched;
    }
    peak = std::max(peak, stamp_.size());
  }
  // The kernel touches the block; false (a demand miss) when it was not resident.
  bool touch(BlockId block) {
    const bool hit = is_resident(block);
    if (hit) {
      remove(block);
    } else if (stamp_.size() == capacity_) {
      remove(lru_.begin()->second);
    }
    insert(block);
    peak = std::max(peak, stamp_.size());
    return hit;
  }
  std::size_t resident_blocks() const { return stamp_.size(); }

  std::size_t peak = 0;
  std::size_t prefetched = 0;

 private:
  void insert(BlockId block) {
    stamp_[block] = ++clock_;
    lru_.emplace(clock_, block);
  }
  void remove(BlockId block) {
    lru_.erase(stamp_.at(block));
    stamp_.erase(block);
  }

  std::size_t capacity_;
  std::uint64_t clock_ = 0;
  std::unordered_map<BlockId, std::uint64_t> stamp_;
  std::map<std::uint64_t, BlockId> lru_;
};

// Infinite memory, nothing resident: the plan is the whole prediction.
struct EmptyGpu final : ResidencyView {
  bool is_resident(BlockId) const override { return false; }
  std::uint64_t resident_bytes() const override { return 0; }
  std::uint64_t limit_bytes() const override { return UINT64_MAX; }
  void visit_least_recently_used(const std::function<bool(BlockId)>&) const override {}
};

}  // namespace

TEST_CASE("a training loop is predicted kernels ahead, in order, as few large ranges") {
  const std::vector<Kernel> loop = make_loop(40, 4, 1000, kFirstBlock);
  std::vector<const Kernel*> sequence;
  for (int iteration = 0; iteration < 10; ++iteration) {
    for (const Kernel& kernel : loop) sequence.push_back(&kernel);
  }
  Driver driver;
  const std::size_t n = driver.planner.lookahead();
  REQUIRE(n == 32);
  for (std::size_t k = 0; k < sequence.size(); ++k) {
    const std::uint64_t correlation = driver.launch(*sequence[k]);
    if (k >= 2 * loop.size()) {
      const std::vector<BlockId> predicted = driver.planner.predicted_blocks();
      CHECK(coverage(predicted, sequence, k, n) >= 0.95);
      const Plan plan = driver.planner.plan(EmptyGpu{}, {});
      // 32 kernels' blocks: one range, two when the window wraps into the next iteration.
      CHECK(plan.prefetch.size() <= 2);
      CHECK(plan.prefetch_bytes() == n * 4 * kBlockBytes);
      // In order: each kernel's blocks come no earlier than the previous kernel's.
      const std::vector<BlockId> order = flatten(plan.prefetch);
      std::size_t previous = 0;
      for (std::size_t j = k; j < std::min(sequence.size(), k + n); ++j) {
        const auto at = static_cast<std::size_t>(
            std::find(order.begin(), order.end(), sequence[j]->blocks.front()) - order.begin());
        CHECK(at >= previous);
        previous = at;
      }
    }
    driver.complete(correlation, sequence[k]->blocks);
  }
}

TEST_CASE("a loop that changes shape is learned again within two iterations") {
  // Batch size change: the first 30 kernels get new keys and new tensors; the last 10 (the
  // optimizer's) keep theirs, so their history must learn a new successor across the wrap.
  const std::vector<Kernel> before = make_loop(40, 3, 1000, kFirstBlock);
  std::vector<Kernel> after = make_loop(40, 3, 5000, kFirstBlock + 1000);
  std::copy(before.begin() + 30, before.end(), after.begin() + 30);
  std::vector<const Kernel*> sequence;
  for (int iteration = 0; iteration < 4; ++iteration) {
    for (const Kernel& kernel : before) sequence.push_back(&kernel);
  }
  const std::size_t change = sequence.size();
  for (int iteration = 0; iteration < 4; ++iteration) {
    for (const Kernel& kernel : after) sequence.push_back(&kernel);
  }
  Driver driver;
  const std::size_t n = driver.planner.lookahead();
  double worst_first_new = 1.0, worst_after_two = 1.0;
  for (std::size_t k = 0; k < sequence.size(); ++k) {
    const std::uint64_t correlation = driver.launch(*sequence[k]);
    const double covered = coverage(driver.planner.predicted_blocks(), sequence, k, n);
    if (k >= change && k < change + 30) worst_first_new = std::min(worst_first_new, covered);
    if (k >= change + 2 * after.size()) worst_after_two = std::min(worst_after_two, covered);
    driver.complete(correlation, sequence[k]->blocks);
  }
  CHECK(worst_first_new < 0.5);  // the change is real: the old tables do not know the new shape
  CHECK(worst_after_two >= 0.95);
}

TEST_CASE("one deviating kernel costs a few predictions, and the next iteration is whole again") {
  const std::vector<Kernel> loop = make_loop(40, 3, 1000, kFirstBlock);
  const Kernel deviant{9999, {kFirstBlock + 5000, kFirstBlock + 5001}, 1};
  std::vector<const Kernel*> sequence;
  for (int iteration = 0; iteration < 8; ++iteration) {
    for (const Kernel& kernel : loop) sequence.push_back(&kernel);
  }
  const std::size_t deviation = 5 * loop.size() + 20;
  sequence[deviation] = &deviant;
  Driver driver;
  const std::size_t n = driver.planner.lookahead();
  std::vector<double> covered(sequence.size(), 1.0);
  for (std::size_t k = 0; k < sequence.size(); ++k) {
    const std::uint64_t correlation = driver.launch(*sequence[k]);
    covered[k] = coverage(driver.planner.predicted_blocks(), sequence, k, n);
    driver.complete(correlation, sequence[k]->blocks);
  }
  // Windows that reach into the deviation mispredict it; at the deviant itself nothing follows.
  CHECK(covered[deviation - 1] < 1.0);
  CHECK(covered[deviation] < 0.5);
  // Three launches later the history is the loop's again.
  for (std::size_t k = deviation + 3; k < deviation + 20; ++k) CHECK(covered[k] >= 0.95);
  // And the loop's successor was not unlearned: the next iteration is predicted throughout.
  for (std::size_t k = 6 * loop.size(); k < 7 * loop.size(); ++k) CHECK(covered[k] == 1.0);
}

TEST_CASE("random accesses do not flood the link, and no plan reaches into the headroom") {
  PrefetchOptions options;
  options.headroom_bytes = 8 * kBlockBytes;
  Driver driver(options);
  SimulatedGpu gpu(64);
  std::mt19937_64 random(42);
  std::uniform_int_distribution<BlockId> any_block(kFirstBlock, kFirstBlock + 100'000);
  const std::size_t budget_blocks = 64 - 8;
  std::size_t warm_prefetched = 0, warm_pointer_blocks = 0;
  for (int iteration = 0; iteration < 10; ++iteration) {
    for (std::uint64_t key = 0; key < 40; ++key) {
      Kernel kernel{key, {}, 1};
      for (int b = 0; b < 4; ++b) kernel.blocks.push_back(any_block(random));
      const std::uint64_t correlation = driver.launch(kernel);
      const Plan plan = driver.planner.plan(gpu, {});
      const std::size_t before = gpu.prefetched;
      gpu.apply(plan);
      // The plan leaves the headroom free: resident after eviction and prefetch within the budget.
      CHECK(gpu.resident_blocks() <= budget_blocks);
      if (iteration >= 3) {
        warm_prefetched += gpu.prefetched - before;
        warm_pointer_blocks += 1;
      }
      std::vector<BlockId> faulted;
      for (BlockId block : kernel.blocks) {
        if (!gpu.touch(block)) faulted.push_back(block);
      }
      driver.complete(correlation, faulted);
    }
  }
  CHECK(gpu.peak <= 64);
  // Once the tables have shown they cannot predict these kernels, only the launch's own pointer
  // blocks (known, not guessed) are prefetched.
  CHECK(warm_prefetched <= warm_pointer_blocks);
}

TEST_CASE("3x oversubscribed: plans never exceed the limit and remove 90% of the demand misses") {
  // 40 kernels x 6 blocks = 240 blocks per iteration through 80 blocks of GPU memory. Each kernel
  // passes a pointer to its first block only; the other five are found by faults, then by the table.
  const std::vector<Kernel> loop = make_loop(40, 6, 1000, kFirstBlock);
  constexpr std::size_t kCapacity = 80, kHeadroom = 8, kIterations = 10, kWarmup = 3;

  auto run = [&](bool prefetch) {
    PrefetchOptions options;
    options.headroom_bytes = kHeadroom * kBlockBytes;
    Driver driver(options);
    SimulatedGpu gpu(kCapacity);
    std::size_t warm_misses = 0, warm_touches = 0, warm_prefetched = 0;
    for (std::size_t iteration = 0; iteration < kIterations; ++iteration) {
      for (const Kernel& kernel : loop) {
        // The host waits for each kernel: the plan is made before the launch, from prediction alone.
        if (prefetch) {
          const std::size_t before = gpu.prefetched;
          gpu.apply(driver.planner.plan(gpu, {}));
          CHECK(gpu.resident_blocks() <= kCapacity - kHeadroom);
          if (iteration >= kWarmup) warm_prefetched += gpu.prefetched - before;
        }
        const std::uint64_t correlation = driver.launch(kernel);
        std::vector<BlockId> faulted;
        for (BlockId block : kernel.blocks) {
          if (!gpu.touch(block)) {
            faulted.push_back(block);
            driver.planner.on_fault(block);
            if (iteration >= kWarmup) ++warm_misses;
          }
          if (iteration >= kWarmup) ++warm_touches;
        }
        driver.complete(correlation, faulted);
      }
    }
    CHECK(gpu.peak <= kCapacity);
    if (prefetch) CHECK(warm_prefetched <= warm_touches + warm_touches / 10);  // little wasted traffic
    return warm_misses;
  };
  const std::size_t without = run(false);
  const std::size_t with = run(true);
  CHECK(without == (kIterations - kWarmup) * 240);  // LRU over a cyclic 3x working set: every touch misses
  CHECK(with * 10 <= without);
}

TEST_CASE("dead memory is discarded and evicted first, since it moves nothing") {
  PrefetchOptions options;
  options.headroom_bytes = 0;
  Driver driver(options);
  SimulatedGpu gpu(10);
  for (BlockId b = 0; b < 10; ++b) gpu.touch(kFirstBlock + b);  // full; block 0 least recently used
  const Kernel kernel{1, {kFirstBlock + 20, kFirstBlock + 21}, 2};
  driver.launch(kernel);
  const std::vector<AddressRange> dead{
      {block_base(kFirstBlock + 7), 2 * kBlockBytes},     // blocks 7 and 8, whole
      {block_base(kFirstBlock + 3) + 4096, kBlockBytes},  // parts of 3 and 4 only
      {block_base(kFirstBlock + 8), kBlockBytes / 2}};    // overlaps the first
  const Plan plan = driver.planner.plan(gpu, dead);
  CHECK(plan.discard == std::vector<AddressRange>{{block_base(kFirstBlock + 3) + 4096, kBlockBytes},
                                                  {block_base(kFirstBlock + 7), 2 * kBlockBytes}});
  CHECK(plan.evict == std::vector<AddressRange>{{block_base(kFirstBlock + 7), 2 * kBlockBytes}});
  // The GPU was full: the prefetch waits for the room the eviction makes, in the next plan.
  CHECK(plan.prefetch.empty());
  gpu.apply(plan);
  const Plan next = driver.planner.plan(gpu, {});
  CHECK(next.evict.empty());
  CHECK(next.prefetch == std::vector<AddressRange>{{block_base(kFirstBlock + 20), 2 * kBlockBytes}});
}

TEST_CASE("blocks predicted for the coming kernels are not evicted; the oldest others are") {
  PrefetchOptions options;
  options.headroom_bytes = 0;
  options.lookahead = 8;
  Driver driver(options);
  const std::vector<Kernel> loop = make_loop(4, 2, 1000, kFirstBlock);  // blocks 0..7
  for (int iteration = 0; iteration < 3; ++iteration) {
    for (const Kernel& kernel : loop) driver.run(kernel);
  }
  SimulatedGpu gpu(10);
  for (BlockId b = 0; b < 10; ++b) gpu.touch(kFirstBlock + 100 + b);  // someone else's blocks, full
  gpu.touch(kFirstBlock + 3);                                         // kernel 1's second block
  const Plan plan = driver.planner.plan(gpu, {});
  // The loop's 8 blocks are needed; 3 is resident and stays, 7 come in; the 7 oldest strangers go
  // (100 was already pushed out by block 3's arrival). The GPU is full, so they come in once the
  // evictions have made room: in the next plan.
  CHECK(plan.prefetch.empty());
  CHECK(plan.evict == std::vector<AddressRange>{{block_base(kFirstBlock + 101), 7 * kBlockBytes}});
  gpu.apply(plan);
  const Plan next = driver.planner.plan(gpu, {});
  CHECK(flatten(next.prefetch).size() == 7);
  CHECK(next.evict.empty());
  gpu.apply(next);
  CHECK(gpu.resident_blocks() == 10);
}

TEST_CASE("a fault on an unpredicted block makes the plan follow the table from there") {
  Driver driver;
  const Kernel first{1, {kFirstBlock, kFirstBlock + 10, kFirstBlock + 11}, 1};
  const Kernel second{1, {kFirstBlock + 50, kFirstBlock + 60, kFirstBlock + 61}, 1};
  driver.run(first);
  driver.run(second);  // the same kernel now starts elsewhere: the walk from its start misses 10, 11
  driver.launch(second);
  std::vector<BlockId> predicted = driver.planner.predicted_blocks();
  CHECK(std::count(predicted.begin(), predicted.end(), kFirstBlock + 11) == 0);
  driver.planner.plan(EmptyGpu{}, {});
  driver.planner.on_fault(kFirstBlock + 10);
  predicted = driver.planner.predicted_blocks();
  CHECK(std::count(predicted.begin(), predicted.end(), kFirstBlock + 11) == 1);
}

TEST_CASE("lookahead grows on late prefetches and shrinks on wasted ones, within bounds") {
  PrefetchOptions options;
  options.lookahead = 32;
  options.min_lookahead = 8;
  options.max_lookahead = 128;
  PrefetchPlanner planner(options);
  auto feed = [&](std::size_t late, std::size_t wasted) {
    for (std::size_t i = 0; i < PrefetchPlanner::kOutcomeWindow; ++i) {
      planner.on_prefetch_outcome(i < late            ? PrefetchOutcome::late
                                  : i < late + wasted ? PrefetchOutcome::wasted
                                                      : PrefetchOutcome::timely);
    }
  };
  feed(1, 0);  // too few to matter
  CHECK(planner.lookahead() == 32);
  feed(8, 2);
  CHECK(planner.lookahead() == 64);
  feed(8, 0);
  feed(8, 0);
  CHECK(planner.lookahead() == 128);  // the maximum
  feed(0, 10);
  CHECK(planner.lookahead() == 64);
  for (int i = 0; i < 5; ++i) feed(0, 10);
  CHECK(planner.lookahead() == 8);  // the minimum

  // The window covers that many kernels.
  Driver driver(options);
  for (std::size_t i = 0; i < PrefetchPlanner::kOutcomeWindow * 5; ++i)
    driver.planner.on_prefetch_outcome(PrefetchOutcome::wasted);
  REQUIRE(driver.planner.lookahead() == 8);
  const std::vector<Kernel> loop = make_loop(20, 1, 1000, kFirstBlock);
  for (int iteration = 0; iteration < 3; ++iteration) {
    for (const Kernel& kernel : loop) driver.run(kernel);
  }
  CHECK(driver.planner.predicted_blocks().size() == 8);
}

TEST_CASE("learned state stays bounded when keys never repeat") {
  PrefetchOptions options;
  options.max_execution_ids = 1000;
  Driver driver(options);
  std::size_t peak = 0;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    driver.run(Kernel{i, {kFirstBlock + i % 3000, kFirstBlock + (i * 7) % 3000}, 1});
    peak = std::max(peak, driver.planner.memory_bytes());
  }
  CHECK(driver.planner.resets() == 4);
  CHECK(driver.planner.execution_ids().ids() <= 1000);
  CHECK(peak < (8u << 20));
}

TEST_CASE("stream progress takes run launches out of the window, on that stream only") {
  PrefetchOptions options;
  options.lookahead = 8;
  PrefetchPlanner planner(options);
  // Launches alternate between two streams; each names its own block.
  for (std::uint64_t i = 0; i < 6; ++i) {
    KernelLaunch launch;
    launch.correlation_id = 10 + i;
    launch.execution_key = 100 + i;
    launch.stream = i % 2 == 0 ? 0xA : 0xB;
    launch.pointer_count = 1;
    launch.pointers[0] = block_base(kFirstBlock + i);
    planner.on_launch(launch);
  }
  auto predicted = [&] {
    const std::vector<BlockId> blocks = planner.predicted_blocks();
    return std::set<BlockId>(blocks.begin(), blocks.end());
  };
  CHECK(predicted().size() == 6);
  // Stream A has run everything before correlation 14: launches 10 and 12 (not 14, nor B's 11, 13).
  planner.on_stream_progress(0xA, 14);
  const std::set<BlockId> left = predicted();
  CHECK(left == std::set<BlockId>{kFirstBlock + 1, kFirstBlock + 3, kFirstBlock + 4, kFirstBlock + 5});
  // Their completion records, arriving later, change nothing more; B's progress removes B's.
  planner.on_kernel_complete(10, {});
  planner.on_stream_progress(0xB, 100);
  CHECK(predicted() == std::set<BlockId>{kFirstBlock + 4});
}
