// differential: drives the model as it was at 1fd2ec5 (reference::, copied verbatim but for its
// namespace) and the model being changed side by side through the same calls, and stops at the
// first call where any returned value, statistic or count differs.
//
//   differential [PROGRAMS]   (default 300 random programs, then the launch_model_cost workloads)
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "deepum/core/launch_ordered_residency.hpp"
#include "ref_model.hpp"

namespace {

namespace cur = deepum::core;
namespace ref = deepum::core::reference;
using cur::AddressRange;
constexpr std::uint64_t kKiB = 1ull << 10, kMiB = 1ull << 20;
constexpr std::uint64_t kBase = 0x7f0000000000;

std::string where;  // the call being compared
[[noreturn]] void differ(const char* what) {
  std::fprintf(stderr, "DIFFER at %s: %s\n", where.c_str(), what);
  std::exit(1);
}
#define SAME(a, b, field) \
  if (!((a).field == (b).field)) differ(#field)

void same_decision(const cur::LaunchEviction& a, const ref::LaunchEviction& b) {
  SAME(a, b, wait_for_eviction);
  SAME(a, b, evict);
  SAME(a, b, wait_for_evict);
  SAME(a, b, evict_after_launch);
  SAME(a, b, fetch);
  SAME(a, b, fetch_waits_for_eviction);
  SAME(a, b, place);
  SAME(a, b, place_after_eviction);
  SAME(a, b, eviction_number);
  SAME(a, b, placement_number);
  SAME(a, b, after_placement);
  SAME(a, b, after_every_placement);
  SAME(a, b, discard);
  SAME(a, b, swap_out);
  SAME(a, b, restore);
  SAME(a, b, unswap);
  SAME(a, b, restore_ahead);
  SAME(a, b, ahead_placement_number);
  SAME(a, b, ahead_after_eviction);
  SAME(a, b, evict_after_placement);
  SAME(a, b, after_drop);
  SAME(a, b, discard_after_eviction);
}

void same_stats(const cur::LaunchOrderedStats& a, const ref::LaunchOrderedStats& b) {
  SAME(a, b, launches);
  SAME(a, b, copies);
  SAME(a, b, evictions);
  SAME(a, b, evicted_bytes);
  SAME(a, b, waited_evictions);
  SAME(a, b, waits_for_pending);
  SAME(a, b, peak_bytes);
  SAME(a, b, launches_over_limit);
  SAME(a, b, fetches);
  SAME(a, b, fetched_bytes);
  SAME(a, b, fetch_skipped_bytes);
  SAME(a, b, discarded_bytes);
  SAME(a, b, placed_bytes);
  SAME(a, b, dead_returned_bytes);
  SAME(a, b, swapped_out_bytes);
  SAME(a, b, restored_bytes);
  SAME(a, b, unswapped_bytes);
  SAME(a, b, unswaps);
  SAME(a, b, swap_peak_bytes);
  SAME(a, b, swap_skipped_other_stream_bytes);
  SAME(a, b, loop_period);
  SAME(a, b, shape_loop_period);
  SAME(a, b, victims_predicted_bytes);
  SAME(a, b, victims_unpredicted_bytes);
  SAME(a, b, restored_ahead_bytes);
  SAME(a, b, other_device_uses);
  SAME(a, b, other_device_bytes);
}

ref::LaunchOrderedOptions to_ref(const cur::LaunchOrderedOptions& o) {
  return {o.prefetch,         o.discard_dead, o.place_fresh,        o.evictions_ahead,
          o.swap,             o.swap_bytes,   o.victims_by_next_use, o.restore_ahead};
}

struct Both {
  cur::LaunchOrderedResidency a;
  ref::LaunchOrderedResidency b;
  cur::LaunchEviction last_a;
  ref::LaunchEviction last_b;
  std::uint64_t decisions = 0, evicting = 0;

  Both(std::uint64_t limit, std::uint64_t batch, const cur::LaunchOrderedOptions& options)
      : a(limit, batch, options), b(limit, batch, to_ref(options)) {}

  void check() {
    same_stats(a.stats(), b.stats());
    if (a.resident_bytes() != b.resident_bytes()) differ("resident_bytes");
    if (a.pending_bytes() != b.pending_bytes()) differ("pending_bytes");
    if (a.swapped_bytes() != b.swapped_bytes()) differ("swapped_bytes");
    if (a.launches_decided() != b.launches_decided()) differ("launches_decided");
    if (a.take_released() != b.take_released()) differ("take_released");
  }
  void decided(cur::LaunchEviction da, ref::LaunchEviction db) {
    same_decision(da, db);
    if (a.last_named() != b.last_named()) differ("last_named");
    ++decisions;
    if (!da.evict.empty() || !da.swap_out.empty() || !da.discard.empty()) ++evicting;
    last_a = std::move(da);
    last_b = std::move(db);
    check();
  }
  void launch(const cur::KernelLaunch& launch, bool may_evict, const cur::LaunchPointers* every) {
    where = "before_launch " + std::to_string(a.launches_decided() + 1);
    auto da = a.before_launch(launch, may_evict, every);
    decided(std::move(da), b.before_launch(launch, may_evict, every));
  }
  void copy(const cur::CopyLaunch& copy, bool may_evict, const cur::LaunchPointers* referenced) {
    where = "before_copy " + std::to_string(a.launches_decided() + 1);
    auto da = a.before_copy(copy, may_evict, referenced);
    decided(std::move(da), b.before_copy(copy, may_evict, referenced));
  }
  void failed() {
    where = "eviction_failed";
    a.eviction_failed(last_a);
    b.eviction_failed(last_b);
    check();
  }
};

struct Random {
  std::mt19937_64 engine;
  explicit Random(std::uint64_t seed) : engine(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : engine() % n; }
  bool chance(unsigned percent) { return below(100) < percent; }
};

// A random program: many ranges of mixed sizes packed 64 KiB apart (some share blocks), long
// stretches of a repeated loop (so that the period is learned and victims go by predicted next use)
// between random operations of every kind the model is told of.
void random_program(std::uint64_t seed) {
  Random r(seed);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  std::uint64_t next = kBase, footprint = 0;
  const std::uint64_t count = 8 + r.below(120);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t bytes = r.chance(30)   ? (1 + r.below(16)) * 64 * kKiB
                                : r.chance(70) ? (1 + r.below(8)) * 2 * kMiB - r.below(4) * 64 * kKiB
                                               : (1 + r.below(32)) * 2 * kMiB;
    ranges.emplace_back(next, bytes);
    footprint += bytes;
    next += (bytes + 64 * kKiB - 1) / (64 * kKiB) * (64 * kKiB);
  }
  cur::LaunchOrderedOptions options;
  options.prefetch = r.chance(70);
  options.discard_dead = r.chance(60);
  options.place_fresh = r.chance(60);
  options.swap = r.chance(70);
  options.swap_bytes = (4 + r.below(400)) * kMiB;
  options.evictions_ahead = static_cast<std::uint32_t>(1 + r.below(3));
  options.victims_by_next_use = r.chance(85);
  options.restore_ahead = r.chance(80);
  const std::uint64_t limit = std::max<std::uint64_t>(8 * kMiB, footprint * 10 / (12 + r.below(30)));
  Both both(limit, std::max<std::uint64_t>(2 * kMiB, limit / (4 + r.below(16))), options);
  for (auto [address, bytes] : ranges) {
    both.a.on_range_allocated(address, bytes);
    both.b.on_range_allocated(address, bytes);
    both.a.on_buffer_handed_out(address, bytes);
    both.b.on_buffer_handed_out(address, bytes);
  }
  const auto operand = [&] {
    const auto [address, bytes] = ranges[r.below(ranges.size())];
    const std::uint64_t offset = r.chance(70) ? 0 : r.below(bytes) / (64 * kKiB) * (64 * kKiB);
    const std::uint64_t extent = r.chance(30) ? 0 : 1 + r.below(bytes - offset);
    return std::pair{address + offset, extent};
  };
  const auto kernel = [&](const std::vector<std::pair<std::uint64_t, std::uint64_t>>& named, std::uint64_t key,
                          std::uint64_t stream, bool unnamed, bool may_evict) {
    cur::KernelLaunch launch;
    launch.stream = stream;
    launch.unnamed_memory = unnamed;
    launch.execution_key = key;
    launch.function = key;
    for (auto [pointer, extent] : named) {
      if (launch.pointer_count == cur::KernelLaunch::kMaxPointers) break;
      launch.pointers[launch.pointer_count] = pointer;
      launch.extents[launch.pointer_count] = extent;
      ++launch.pointer_count;
    }
    both.launch(launch, may_evict, nullptr);
    if (r.chance(2)) both.failed();
    if (!both.last_a.swap_out.empty() && r.chance(4)) {
      where = "swap_refused";
      const bool full = r.chance(30);
      both.a.swap_refused(both.last_a.swap_out, full);
      both.b.swap_refused(both.last_b.swap_out, full);
      both.check();
    }
  };
  std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> loop(20 + r.below(200));
  for (auto& op : loop) {
    const std::uint64_t operands = 1 + r.below(4);
    for (std::uint64_t i = 0; i < operands; ++i) op.push_back(operand());
  }
  const std::uint64_t steps = 3000 + r.below(3000);
  std::uint64_t at = 0;
  for (std::uint64_t step = 0; step < steps; ++step) {
    if ((step / 1000) % 3 != 2 && !r.chance(3)) {
      kernel(loop[at % loop.size()], 1 + at % loop.size(), 7, false, true);
      ++at;
      continue;
    }
    const std::uint64_t stream = r.chance(80) ? 7 : 9;
    const auto event = r.below(100);
    const auto [address, bytes] = ranges[r.below(ranges.size())];
    where = "event " + std::to_string(event);
    if (event < 3) {
      both.a.on_buffer_returned(address, bytes, stream);
      both.b.on_buffer_returned(address, bytes, stream);
    } else if (event < 6) {
      both.a.on_buffer_handed_out(address, bytes);
      both.b.on_buffer_handed_out(address, bytes);
    } else if (event < 8) {
      const auto [pointer, extent] = operand();
      const auto ua = both.a.named_by_other_device(&pointer, &extent, 1);
      const auto ub = both.b.named_by_other_device(&pointer, &extent, 1);
      if (ua.unswap != ub.unswap || ua.after_placement != ub.after_placement) differ("named_by_other_device");
    } else if (event < 9) {
      both.a.on_range_freed(address);
      both.b.on_range_freed(address);
      both.a.on_range_allocated(address, bytes);
      both.b.on_range_allocated(address, bytes);
    } else if (event < 10) {
      if (both.a.unswap_all() != both.b.unswap_all()) differ("unswap_all");
    } else if (event == 99 && r.chance(10)) {
      if (both.a.stop_swapping() != both.b.stop_swapping()) differ("stop_swapping");
    } else if (event < 12) {
      if (both.a.forget_fresh_and_unswap() != both.b.forget_fresh_and_unswap()) differ("forget_fresh_and_unswap");
    } else if (event < 20) {
      cur::CopyLaunch copy;
      copy.stream = stream;
      const auto o1 = operand(), o2 = operand();
      copy.operand_count = r.below(3);
      copy.operands = {o1.first, o2.first};
      copy.bytes = r.chance(80) ? 1 + r.below(8 * kMiB) : 0;
      const std::uint64_t pointers[] = {o1.first, o2.first};
      const std::uint64_t extents[] = {o1.second, o2.second};
      const cur::LaunchPointers referenced{pointers, extents, 2, r.chance(70)};
      both.copy(copy, !r.chance(5), r.chance(40) ? &referenced : nullptr);
    } else {
      std::vector<std::pair<std::uint64_t, std::uint64_t>> named;
      for (std::uint64_t i = 1 + r.below(3); i > 0; --i) named.push_back(operand());
      kernel(named, 5000 + r.below(50), stream, r.chance(5), !r.chance(4));
    }
    both.check();
  }
  static std::uint64_t total = 0, evicting = 0;
  total += both.decisions;
  evicting += both.evicting;
  if (seed % 50 == 0)
    std::printf("programs to %llu: %llu decisions compared, %llu with victims\n",
                static_cast<unsigned long long>(seed), static_cast<unsigned long long>(total),
                static_cast<unsigned long long>(evicting));
}

// launch_model_cost's loop, with its options and with every move on.
void bench_workload(std::uint64_t tensor_bytes, bool every_move) {
  constexpr std::size_t kTensors = 1000;
  const std::uint64_t segment =
      std::max<std::uint64_t>(20 * kMiB, (tensor_bytes + 2 * kMiB - 1) / (2 * kMiB) * 2 * kMiB);
  const std::uint64_t per_segment = segment / tensor_bytes;
  const std::uint64_t segments = (kTensors + per_segment - 1) / per_segment;
  const std::uint64_t footprint = segments * segment;
  cur::LaunchOrderedOptions options;
  if (every_move) {
    options = {.prefetch = true, .discard_dead = true, .place_fresh = true, .swap = true,
               .swap_bytes = footprint / 4};
  }
  Both both(footprint / 2, footprint / 16, options);
  std::vector<std::uint64_t> tensors;
  for (std::uint64_t s = 0; s < segments; ++s) {
    both.a.on_range_allocated(kBase + s * segment, segment);
    both.b.on_range_allocated(kBase + s * segment, segment);
    for (std::uint64_t t = 0; t < per_segment && tensors.size() < kTensors; ++t)
      tensors.push_back(kBase + s * segment + t * tensor_bytes);
  }
  for (std::size_t i = 0; i < 12000; ++i) {
    cur::KernelLaunch launch;
    launch.pointer_count = 3;
    for (std::size_t p = 0; p < 3; ++p) {
      launch.pointers[p] = tensors[(i * 3 + p * 7) % kTensors];
      launch.extents[p] = tensor_bytes;
    }
    both.launch(launch, true, nullptr);
  }
  std::printf("bench %6.2f MiB%s: %llu decisions compared, %llu with victims\n",
              static_cast<double>(tensor_bytes) / kMiB, every_move ? " every move" : "",
              static_cast<unsigned long long>(both.decisions), static_cast<unsigned long long>(both.evicting));
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t programs = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 300;
  for (std::uint64_t seed = 1; seed <= programs; ++seed) random_program(seed);
  for (const std::uint64_t bytes : {64 * kKiB, 1 * kMiB, 4 * kMiB, 16 * kMiB, 64 * kMiB}) {
    bench_workload(bytes, false);
    bench_workload(bytes, true);
  }
  std::printf("identical\n");
  return 0;
}
