// A property of LaunchOrderedResidency, checked over random programs: no operation ever finds the
// only copy of what it may touch in deepum's swap store, and no move drops contents the program
// wrote. A checker follows where each block's contents are as the decisions move them, in the
// order the library issues them (discards, evictions and swaps, placements and copies back,
// fetches, copies back ahead, the host's copies back), then lets the operation write what it
// names. The programs mix a repeated loop (so the model learns it and copies back ahead) with
// random operations in two streams (blocks named in both swapped where a follower allows),
// pointer tables, operations that may reach memory they do not name, stream captures, another
// device's operations, the allocator's buffers coming and going, frees, a store that refuses
// swaps, swapping stopped, and moves the library could not enqueue. Some operations run late, as
// another thread's does when the driver enqueues it only after later decisions (their moves come
// first in the stream): the model is told so (set_enqueued_below) until it runs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "deepum/core/launch_ordered_residency.hpp"

using namespace deepum::core;

namespace {

constexpr std::uint64_t kKiB = 1ull << 10, kMiB = 1ull << 20;
constexpr std::uint64_t kBase = 0x7f0000000000;  // 2 MB aligned

// Where a part's contents are: in managed memory (on the GPU or the host, the driver's to move),
// or only in deepum's store (the GPU's pages dropped). Contents that do not matter (never written
// since handed out, or dead) count as in managed memory, not live.
enum class Where : std::uint8_t { managed, store };

struct Part {
  Where where = Where::managed;
  bool live = false;  // written by the program since its buffer was handed out
  bool dead = false;  // in the allocator's cache (taken back, not handed out since)
};

class Checker {
 public:
  void allocate(std::uint64_t address, std::uint64_t bytes) { ranges_[address] = bytes; }
  void free(std::uint64_t address) {
    const std::uint64_t bytes = ranges_.at(address);
    for_each_part({address, bytes}, [&](const Key& key) { parts_.erase(key); });
    ranges_.erase(address);
  }
  // The allocator took [address, address + bytes) back: the whole blocks inside hold nothing (a
  // swapped one's store copy is not needed).
  void returned(std::uint64_t address, std::uint64_t bytes) {
    const std::uint64_t first = (address + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
    const std::uint64_t end = (address + bytes) / kBlockBytes * kBlockBytes;
    if (first >= end) return;
    for_each_part({first, end - first}, [&](const Key& key) {
      parts_[key] = Part{Where::managed, false, true};
    });
  }
  // Handed out again: a new buffer, holding nothing the program wrote until it writes it.
  void handed_out(std::uint64_t address, std::uint64_t bytes) {
    for_each_part({address, bytes}, [&](const Key& key) { parts_[key].dead = false; });
  }
  // Carries a decision out; `failure` says what went wrong, empty if nothing.
  void apply(const LaunchEviction& d, std::string& failure) {
    for_each(d.discard, [&](Part& p) {
      if (p.live) failure = "a discard dropped contents the program wrote";
      p.where = Where::managed;  // nothing: the buffer stays in the cache
    });
    // Evictions by the driver keep the contents in managed memory: nothing to follow. Swaps copy
    // them into the store and drop the GPU's pages.
    for_each(d.swap_out, [&](Part& p) { p.where = Where::store; });
    place(d.place, failure);
    const auto copy_back = [&](const std::vector<AddressRange>& ranges, const char* what) {
      for_each(ranges, [&](Part& p) {
        if (p.where != Where::store) failure = std::string(what) + " of a block the store does not hold";
        p.where = Where::managed;
      });
    };
    copy_back(d.restore, "a copy back");
    copy_back(d.restore_ahead, "a copy back ahead");
    copy_back(d.unswap, "a host copy back");
  }
  // The moves could not be enqueued (eviction_failed): the victims keep their contents where they
  // are, the host copies back what the store holds (a block swapped out by this very decision and
  // copied back ahead by it has no slot: skipped), and what was to be placed is faulted in by the
  // operation, which writes it (its store copy, if any, was not needed).
  void apply_failed(const LaunchEviction& d, std::string& failure) {
    for (const std::vector<AddressRange>* back : {&d.restore, &d.restore_ahead, &d.unswap})
      for_each(*back, [&](Part& p) { p.where = Where::managed; });
    place(d.place, failure);
  }
  // Fresh blocks made resident without their contents: nothing the program wrote may be there.
  void place(const std::vector<AddressRange>& ranges, std::string& failure) {
    for_each(ranges, [&](Part& p) {
      if (p.live) failure = "a placement dropped contents the program wrote";
      p.where = Where::managed;  // nothing yet: the operation writes it
    });
  }
  // The host copied these back (stop_swapping, unswap_all, another device's use, ...).
  void copied_back(const std::vector<AddressRange>& ranges, std::string& failure) {
    for_each(ranges, [&](Part& p) {
      if (p.where != Where::store) failure = "a host copy back of a block the store does not hold";
      p.where = Where::managed;
    });
  }
  // The store had no room: the driver wrote them back instead.
  void refused(const std::vector<AddressRange>& ranges) {
    for_each(ranges, [&](Part& p) { p.where = Where::managed; });
  }
  // The operation touches what it names and writes it; `unnamed`: it may touch any live buffer.
  void run(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& named, bool unnamed,
           std::string& failure) {
    if (unnamed) {
      for (auto& [key, p] : parts_) {
        if (p.where == Where::store)
          failure = "an operation that may reach any memory ran while a block was swapped";
        if (!p.dead) p.live = true;
      }
      return;
    }
    for (auto [pointer, extent] : named) {
      const auto range = range_of(pointer);
      if (range == ranges_.end()) continue;
      const std::uint64_t end = extent == 0 ? range->first + range->second
                                            : std::min(pointer + extent, range->first + range->second);
      for_each_part({pointer, end - pointer}, [&](const Key& key) {
        Part& p = parts_[key];
        if (p.where == Where::store) failure = "an operation named a block whose only copy is in the store";
        p.live = true;
        p.dead = false;
      });
    }
  }
  std::uint64_t swapped_parts() const {
    std::uint64_t n = 0;
    for (const auto& [key, p] : parts_) n += p.where == Where::store ? 1 : 0;
    return n;
  }

 private:
  std::map<std::uint64_t, std::uint64_t>::const_iterator range_of(std::uint64_t address) const {
    auto it = ranges_.upper_bound(address);
    if (it == ranges_.begin()) return ranges_.end();
    --it;
    return address < it->first + it->second ? it : ranges_.end();
  }
  // A range's part of one block (a block two ranges share has a part in each).
  using Key = std::pair<std::uint64_t, BlockId>;  // the range's address, the block
  // The parts of the range `span` starts in, as far as `span` reaches within it.
  template <typename Fn>
  void for_each_part(const AddressRange& span, Fn&& fn) const {
    const auto range = range_of(span.address);
    if (range == ranges_.end() || span.bytes == 0) return;
    const std::uint64_t end = std::min(span.address + span.bytes, range->first + range->second);
    for_each_block_of({span.address, end - span.address}, [&](BlockId block) {
      fn(Key{range->first, block});
    });
  }
  template <typename Fn>
  void for_each(const std::vector<AddressRange>& ranges, Fn&& fn) {
    for (const AddressRange& range : ranges) for_each_part(range, [&](const Key& key) { fn(parts_[key]); });
  }

  std::map<std::uint64_t, std::uint64_t> ranges_;  // address -> bytes
  std::map<Key, Part> parts_;
};

struct Program {
  std::mt19937_64 random;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;  // address, bytes
  std::vector<bool> cached;  // by range: its buffer is in the allocator's cache (nothing names it)

  explicit Program(std::uint64_t seed) : random(seed) {}
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : random() % n; }
  bool chance(unsigned percent) { return below(100) < percent; }
  // A range whose buffer the program holds (every range's buffer is the whole range).
  std::size_t held_range() {
    std::size_t i = below(ranges.size());
    while (cached[i]) i = (i + 1) % ranges.size();
    return i;
  }
  // A pointer into a held range and an extent (0: to the end of the allocation).
  std::pair<std::uint64_t, std::uint64_t> operand() {
    const auto [address, bytes] = ranges[held_range()];
    const std::uint64_t offset = chance(70) ? 0 : below(bytes) / (64 * kKiB) * (64 * kKiB);
    const std::uint64_t extent = chance(30) ? 0 : 1 + below(bytes - offset);
    return {address + offset, extent};
  }
};

// Ranges packed 64 KiB apart, some smaller than a block, so that several share one.
std::vector<std::pair<std::uint64_t, std::uint64_t>> layout(Program& program) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
  std::uint64_t next = kBase;
  for (int i = 0; i < 10; ++i) {
    const std::uint64_t bytes = program.chance(30)
                                    ? (1 + program.below(16)) * 64 * kKiB
                                    : (1 + program.below(8)) * 2 * kMiB - program.below(4) * 64 * kKiB;
    ranges.emplace_back(next, bytes);
    next += (bytes + 64 * kKiB - 1) / (64 * kKiB) * (64 * kKiB);
  }
  return ranges;
}

LaunchOrderedOptions random_options(Program& program) {
  LaunchOrderedOptions options;
  options.prefetch = program.chance(80);
  options.discard_dead = program.chance(70);
  options.place_fresh = program.chance(70);
  options.swap = true;
  options.swap_bytes = (4 + program.below(40)) * kMiB;
  options.evictions_ahead = static_cast<std::uint32_t>(1 + program.below(3));
  options.victims_by_next_use = program.chance(80);
  options.restore_ahead = program.chance(80);
  return options;
}

using Operands = std::vector<std::pair<std::uint64_t, std::uint64_t>>;  // pointer, extent

// One random program driving the model and the checker side by side.
struct RandomRun {
  Program program;
  std::unique_ptr<LaunchOrderedResidency> model;
  Checker checker;
  std::string failure;

  explicit RandomRun(std::uint64_t seed) : program(seed) {
    program.ranges = layout(program);
    program.cached.assign(program.ranges.size(), false);
    std::uint64_t footprint = 0;
    for (auto [address, bytes] : program.ranges) footprint += bytes;
    const std::uint64_t limit = std::max<std::uint64_t>(8 * kMiB, footprint / (2 + program.below(3)));
    model = std::make_unique<LaunchOrderedResidency>(limit, std::max<std::uint64_t>(2 * kMiB, limit / 8),
                                                     random_options(program));
    // Blocks both streams named are swapped too where a follower says the other stream's users can
    // be waited for, as the library's markers do (not always).
    if (program.chance(50)) {
      model->set_stream_follower([this](std::uint64_t, std::uint64_t) { return program.chance(80); });
    }
    for (auto [address, bytes] : program.ranges) {
      model->on_range_allocated(address, bytes);
      checker.allocate(address, bytes);
      model->on_buffer_handed_out(address, bytes);
    }
  }
  void hand_out(std::size_t i) {
    const auto [address, bytes] = program.ranges[i];
    model->on_buffer_handed_out(address, bytes);
    checker.handed_out(address, bytes);
    program.cached[i] = false;
  }
  // The allocator takes a buffer back (one range stays held), or hands one out.
  void buffer_event(bool take_back, std::uint64_t stream) {
    const std::size_t i = program.below(program.ranges.size());
    const auto [address, bytes] = program.ranges[i];
    if (!program.cached[i] && take_back &&
        std::count(program.cached.begin(), program.cached.end(), false) > 1) {
      model->on_buffer_returned(address, bytes, stream);
      checker.returned(address, bytes);
      program.cached[i] = true;
    } else if (program.cached[i]) {
      hand_out(i);
    }
  }
  // Another device's operation names some of it.
  void other_device() {
    const auto [pointer, extent] = program.operand();
    const LaunchOrderedResidency::OtherDeviceUse use = model->named_by_other_device(&pointer, &extent, 1);
    checker.copied_back(use.unswap, failure);
    checker.run({{pointer, extent}}, false, failure);
  }
  // A range freed and allocated again at the same address, as a caching allocator may.
  void free_and_allocate() {
    const auto [address, bytes] = program.ranges[program.held_range()];
    model->on_range_freed(address);
    checker.free(address);
    model->on_range_allocated(address, bytes);
    checker.allocate(address, bytes);
    model->on_buffer_handed_out(address, bytes);
  }
  // A copy to the GPU carrying a table of pointers (complete or cut short).
  LaunchEviction table_copy(std::uint64_t stream) {
    CopyLaunch copy;
    copy.stream = stream;
    const Operands table{program.operand(), program.operand()};
    const std::uint64_t pointers[] = {table[0].first, table[1].first};
    const std::uint64_t extents[] = {table[0].second, table[1].second};
    const bool complete = program.chance(70);
    const LaunchPointers referenced{pointers, extents, 2, complete};
    tell_enqueued();
    const LaunchEviction decision = model->before_copy(copy, true, &referenced);
    checker.apply(decision, failure);
    checker.run(table, !complete, failure);
    return decision;
  }
  // An operation decided whose driver call has not returned: it runs after the decisions of the
  // next `left` operations, whose moves come before it.
  struct Unenqueued {
    Operands named;
    bool unnamed = false;
    std::uint64_t number = 0;
    int left = 0;
  };
  std::optional<Unenqueued> unenqueued;
  // Before each decision: what the model may take as enqueued.
  void tell_enqueued() { model->set_enqueued_below(unenqueued ? unenqueued->number : UINT64_MAX); }
  // After each operation: the one not enqueued runs once its turn comes (`now`: at once).
  void enqueue_late(bool now = false) {
    if (unenqueued && (--unenqueued->left <= 0 || now)) {
      checker.run(unenqueued->named, unenqueued->unnamed, failure);
      unenqueued.reset();
    }
  }
  // `late`: the operation runs only after the next few operations' decisions (another thread's).
  LaunchEviction kernel(const Operands& named, std::uint64_t key, std::uint64_t stream, bool unnamed,
                        bool capturing, bool late = false) {
    KernelLaunch launch;
    launch.stream = stream;
    launch.unnamed_memory = unnamed;
    launch.execution_key = key;
    for (auto [pointer, extent] : named) {
      launch.pointers[launch.pointer_count] = pointer;
      launch.extents[launch.pointer_count] = extent;
      ++launch.pointer_count;
    }
    tell_enqueued();
    const LaunchEviction decision = model->before_launch(launch, !capturing);
    if (program.chance(3)) {
      // The library could not enqueue the moves.
      model->eviction_failed(decision);
      checker.apply_failed(decision, failure);
      checker.run(named, unnamed, failure);
      return {};
    }
    checker.apply(decision, failure);
    if (late && !unenqueued) {
      unenqueued =
          Unenqueued{named, unnamed, model->launches_decided(), 1 + static_cast<int>(program.below(4))};
    } else {
      checker.run(named, unnamed, failure);
    }
    return decision;
  }
  // One random step off the loop. While an operation is not enqueued, only operations follow (the
  // program frees and hands out nothing it still uses).
  void random_step(int step) {
    const std::uint64_t stream = program.chance(80) ? 7 : 9;
    const auto event = static_cast<unsigned>(unenqueued ? 8 + program.below(92) : program.below(100));
    if (event < 4) return buffer_event(event < 2, stream);
    if (event < 6) return other_device();
    if (event < 7) return free_and_allocate();
    if (event < 8) return checker.copied_back(model->unswap_all(), failure);  // before a capture, at exit
    if (event == 99 && program.chance(20)) return checker.copied_back(model->stop_swapping(), failure);
    const LaunchEviction decision =
        event >= 14 && event < 20 ? table_copy(stream)
                                  : kernel({program.operand()}, 100 + static_cast<std::uint64_t>(step),
                                           stream, event < 11, event >= 11 && event < 14, program.chance(10));
    // Now and then the store has no room for a swap: the driver writes those blocks back.
    if (!decision.swap_out.empty() && program.chance(5)) {
      model->swap_refused(decision.swap_out, program.chance(50));
      checker.refused(decision.swap_out);
    }
  }
};

// One random program against the model: a fixed loop of operations, repeated, between random
// stretches. Returns the first failure, with the operation it came at.
std::string run_program(std::uint64_t seed, std::uint64_t& swapped_out) {
  RandomRun run(seed);
  std::vector<Operands> loop;
  for (int i = 0; i < 12; ++i) loop.push_back({run.program.operand(), run.program.operand()});
  for (int step = 0; step < 400 && run.failure.empty(); ++step) {
    const bool looping = (step / 100) % 2 == 0;
    if (!looping) {
      run.random_step(step);
    } else {
      // The loop names every range again: what the cache holds is handed out first (after the
      // operation not enqueued yet, which may write any buffer held).
      if (step % 100 == 0) run.enqueue_late(true);
      for (std::size_t i = 0; step % 100 == 0 && i < run.program.ranges.size(); ++i) {
        if (run.program.cached[i]) run.hand_out(i);
      }
      const std::size_t at = static_cast<std::size_t>(step) % loop.size();
      run.kernel(loop[at], 1 + at, 7, false, false, run.program.chance(10));
    }
    run.enqueue_late();
    run.model->take_released();
    if (!run.failure.empty()) run.failure += " (operation " + std::to_string(step) + ")";
  }
  swapped_out = run.model->stats().swapped_out_bytes;
  if (run.failure.empty() && run.checker.swapped_parts() * kBlockBytes < run.model->swapped_bytes())
    run.failure = "the model counts more swapped than the store holds";
  return run.failure;
}

}  // namespace

TEST_CASE("no operation finds the only copy of what it names in the store; no move drops what was written") {
  std::uint64_t swapped_total = 0;
  for (std::uint64_t seed = 1; seed <= 1000; ++seed) {
    std::uint64_t swapped = 0;
    const std::string failure = run_program(seed, swapped);
    INFO("seed " << seed);
    CHECK_MESSAGE(failure.empty(), failure);
    swapped_total += swapped;
  }
  CHECK(swapped_total > 0);  // the programs did swap
}
