#include "deepum/sim/volume_bound.hpp"

#include <algorithm>
#include <limits>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

namespace deepum::sim {

namespace {

constexpr std::uint32_t kNever = BlockTimes::kNever;
static_assert(core::kBlockBytes == std::uint64_t{1} << 21, "block ids are addresses >> 21");

// The bytes of [address, address + bytes) in each of the workload's blocks it overlaps: only
// blocks the workload has, so a bad trace's huge range costs no more than the workload's size.
template <typename Each>
void for_each_overlap(const Workload& w, std::uint64_t address, std::uint64_t bytes, Each&& each) {
  const std::uint64_t end = address + std::min(bytes, std::numeric_limits<std::uint64_t>::max() - address);
  auto it = std::lower_bound(w.block_ids.begin(), w.block_ids.end(), address >> 21);
  for (; it != w.block_ids.end() && (*it << 21) < end; ++it) {
    const std::uint64_t from = std::max(address, *it << 21);
    const std::uint64_t rest_of_block = core::kBlockBytes - (from & (core::kBlockBytes - 1));
    each(static_cast<BlockIndex>(it - w.block_ids.begin()), std::min(end - from, rest_of_block));
  }
}

// A block dies when its range is freed, or when the last allocator buffer in it is returned.
void add_deaths(const Workload& w, BlockTimes& t) {
  for (const BlockRelease& r : w.releases) {
    for (std::uint32_t b = r.first; b < r.first + r.count && b < w.block_count(); ++b)
      t.deaths[b].push_back(r.before_kernel);
  }
  std::vector<std::uint64_t> live(w.block_count(), 0);
  for (const HostEvent& e : w.host_events) {
    if (e.kind == HostEvent::Kind::buffer_handed_out) {
      for_each_overlap(w, e.address, e.bytes, [&](BlockIndex b, std::uint64_t bytes) { live[b] += bytes; });
    } else if (e.kind == HostEvent::Kind::buffer_returned) {
      for_each_overlap(w, e.address, e.bytes, [&](BlockIndex b, std::uint64_t bytes) {
        if (live[b] == 0) return;
        live[b] -= std::min(live[b], bytes);
        if (live[b] == 0) t.deaths[b].push_back(e.before_kernel);
      });
    }
  }
  for (std::vector<std::uint32_t>& d : t.deaths) std::sort(d.begin(), d.end());
}

}  // namespace

BlockTimes block_times(const Workload& w) {
  BlockTimes t;
  t.uses.resize(w.block_count());
  t.deaths.resize(w.block_count());
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) {
    for (BlockIndex b : w.blocks_of(k)) t.uses[b].push_back(k);
  }
  add_deaths(w, t);
  return t;
}

std::uint32_t BlockTimes::next_use(BlockIndex block, std::uint32_t after) const {
  const std::vector<std::uint32_t>& named = uses[block];
  const std::vector<std::uint32_t>& died = deaths[block];
  const auto next = std::upper_bound(named.begin(), named.end(), after);
  const auto death = std::upper_bound(died.begin(), died.end(), after);
  return std::min(next == named.end() ? kNever : *next, death == died.end() ? kNever : *death);
}

namespace {

// Whether block b, named at k, dies before `next` (its next use), or at all after k when kNever.
bool dies_between(const std::vector<std::uint32_t>& deaths, std::uint32_t k, std::uint32_t next) {
  const auto it = std::upper_bound(deaths.begin(), deaths.end(), k);
  return it != deaths.end() && *it <= next;
}

// Belady's MIN, one operation at a time: each named block made resident (its contents brought
// back when it holds some), then the blocks whose next use is farthest evicted down to capacity
// (written back when something will read them).
class MinReplay {
 public:
  MinReplay(const Workload& w, std::uint64_t capacity_blocks)
      : w_(w),
        t_(block_times(w)),
        capacity_(capacity_blocks),
        resident_(w.block_count(), false),
        holds_(w.block_count(), false),
        named_at_(w.block_count(), kNever),
        next_use_(w.block_count(), 0),
        next_death_(w.block_count(), 0),
        stamp_(w.block_count(), 0) {}

  void run(std::uint32_t k, bool counted) {
    counted_ = counted;
    for (BlockIndex b : w_.blocks_of(k)) name(b, k);
    evict_down_to_capacity(k);
  }
  VolumeBound bound() const { return bound_; }

 private:
  using Victim = std::tuple<std::uint32_t, std::uint32_t, BlockIndex>;  // key, stamp, block

  void name(BlockIndex b, std::uint32_t k) {
    // Dead since it was last named: fresh, whatever it held.
    for (; next_death_[b] < t_.deaths[b].size() && t_.deaths[b][next_death_[b]] <= k; ++next_death_[b])
      holds_[b] = false;
    if (!resident_[b]) {
      if (holds_[b] && counted_) bound_.to_gpu_bytes += core::kBlockBytes;
      resident_[b] = true;
      ++count_;
    }
    holds_[b] = true;
    named_at_[b] = k;
    while (next_use_[b] < t_.uses[b].size() && t_.uses[b][next_use_[b]] <= k) ++next_use_[b];
    const std::uint32_t next = next_use_[b] < t_.uses[b].size() ? t_.uses[b][next_use_[b]] : kNever;
    victims_.emplace(next == kNever || dies_between(t_.deaths[b], k, next) ? kNever : next, ++stamp_[b], b);
  }

  void evict_down_to_capacity(std::uint32_t k) {
    std::vector<Victim> named_now;  // the operation needs them: put back afterwards
    while (count_ > capacity_ && !victims_.empty()) {
      const Victim top = victims_.top();
      victims_.pop();
      const auto [key, stamp, v] = top;
      if (!resident_[v] || stamp != stamp_[v]) continue;
      if (named_at_[v] == k) {
        named_now.push_back(top);
        continue;
      }
      if (key != kNever && counted_) bound_.to_host_bytes += core::kBlockBytes;
      resident_[v] = false;
      --count_;
    }
    for (const Victim& victim : named_now) victims_.push(victim);
  }

  const Workload& w_;
  const BlockTimes t_;
  const std::uint64_t capacity_;
  std::vector<bool> resident_, holds_;  // holds: contents someone may read (else fresh)
  std::vector<std::uint32_t> named_at_, next_use_, next_death_, stamp_;  // indices into t_'s lists
  std::priority_queue<Victim> victims_;  // farthest next use first; kNever: nothing will read it
  std::uint64_t count_ = 0;
  bool counted_ = false;
  VolumeBound bound_;
};

}  // namespace

VictimCost victim_cost(const Workload& w, std::span<const EvictionRecord> evictions,
                       std::uint32_t window_start) {
  const BlockTimes t = block_times(w);
  VictimCost cost;
  for (const EvictionRecord& e : evictions) {
    if (e.cause == EvictionRecord::Cause::discard || e.kernel < window_start || e.block >= t.uses.size())
      continue;
    cost.written_bytes += core::kBlockBytes;
    // Evicted before operation `kernel` (or during it, for a fault, whose victim it does not name).
    const std::vector<std::uint32_t>& uses = t.uses[e.block];
    const auto next = std::lower_bound(uses.begin(), uses.end(), e.kernel);
    const std::uint32_t at = next == uses.end() ? kNever : *next;
    // Deaths before operation `kernel` on count: the eviction came after that operation's host events.
    const std::vector<std::uint32_t>& deaths = t.deaths[e.block];
    const auto death = std::lower_bound(deaths.begin(), deaths.end(), e.kernel);
    if (death != deaths.end() && *death <= at) {
      cost.died_first_bytes += core::kBlockBytes;
    } else if (at == kNever) {
      cost.never_bytes += core::kBlockBytes;
    } else {
      const std::uint32_t later = at - e.kernel;
      (later < VictimCost::kSoon    ? cost.soon_bytes
       : later < VictimCost::kLater ? cost.within_bytes
                                    : cost.later_bytes) += core::kBlockBytes;
    }
  }
  return cost;
}

VolumeBound belady_volume(const Workload& w, std::uint64_t capacity_blocks, std::uint32_t window_start) {
  MinReplay replay(w, capacity_blocks);
  for (std::uint32_t k = 0; k < w.kernels.size(); ++k) replay.run(k, k >= window_start);
  return replay.bound();
}

}  // namespace deepum::sim
