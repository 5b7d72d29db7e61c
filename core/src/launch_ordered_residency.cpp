#include "deepum/core/launch_ordered_residency.hpp"

#include <algorithm>
#include <iterator>
#include <utility>

namespace deepum::core {

void LaunchOrderedResidency::on_range_allocated(std::uint64_t address, std::uint64_t bytes) {
  if (bytes == 0) return;
  // A range still recorded at this address (its free not told yet): forgotten first, so that no
  // LRU entry points into blocks that are replaced.
  on_range_freed(address);
  range_of_block_.fill({});
  Range& range = ranges_[address];
  range.address = address;
  range.bytes = bytes;
  range.blocks.clear();
  range.blocks.resize(block_of(address + bytes - 1) - block_of(address) + 1);
  range_bytes_ += bytes;
  // What cudaMalloc returns holds nothing yet.
  if (options_.place_fresh) {
    for (Block& block : range.blocks) block.fresh_epoch = fresh_epoch_;
  }
  note_live_bytes();
}

void LaunchOrderedResidency::on_range_freed(std::uint64_t address) {
  auto it = ranges_.find(address);
  if (it == ranges_.end()) return;
  for (std::size_t index = 0; index < it->second.blocks.size(); ++index) {
    set_dead(it->second, index, false);
    make_evicted(it->second, index);
    release_swapped(it->second, index);
  }
  range_bytes_ -= it->second.bytes;
  ranges_.erase(it);
  range_of_block_.fill({});
}

namespace {
// Appends `wanted` (a part of `range`) to `ranges`, merged with the last one when contiguous within
// the same allocation (a driver call may not span two).
template <typename RangeT>
void append_merged(std::vector<AddressRange>& ranges, const RangeT*& last_range, const RangeT* range,
                   const AddressRange& wanted) {
  if (range == last_range && ranges.back().address + ranges.back().bytes == wanted.address) {
    ranges.back().bytes += wanted.bytes;
  } else {
    ranges.push_back(wanted);
    last_range = range;
  }
}
}  // namespace

const LaunchOrderedResidency::Range* LaunchOrderedResidency::range_holding(std::uint64_t address) const {
  auto it = ranges_.upper_bound(address);
  if (it == ranges_.begin()) return nullptr;
  --it;
  return address < it->first + it->second.bytes ? &it->second : nullptr;
}

LaunchOrderedResidency::Range* LaunchOrderedResidency::range_holding(std::uint64_t address) {
  const BlockId block = block_of(address);
  RangeOfBlock& known = range_of_block_[block % range_of_block_.size()];
  if (known.block == block) return known.range;
  Range* range = const_cast<Range*>(std::as_const(*this).range_holding(address));
  // Only a block no other range shares: any address in it then lies in this range.
  if (range != nullptr && range->address <= block_base(block) &&
      block_base(block) + kBlockBytes <= range->address + range->bytes)
    known = {block, range};
  return range;
}

std::pair<std::size_t, std::size_t> LaunchOrderedResidency::parts_spanned(const Range& range,
                                                                          std::uint64_t pointer,
                                                                          std::uint64_t extent) {
  const std::uint64_t range_end = range.address + range.bytes;
  const std::uint64_t end = extent != 0 ? std::min(range_end, pointer + extent) : range_end;
  return {block_of(pointer) - block_of(range.address), block_of(end - 1) - block_of(range.address)};
}

bool LaunchOrderedResidency::holds_any(const std::uint64_t* pointers, std::size_t count) const {
  return std::any_of(pointers, pointers + count,
                     [this](std::uint64_t pointer) { return range_holding(pointer) != nullptr; });
}

LaunchOrderedResidency::OtherDeviceUse LaunchOrderedResidency::named_by_other_device(
    const std::uint64_t* pointers, const std::uint64_t* extents, std::size_t count) {
  const auto each_block = [&](auto&& each) {
    for (std::size_t i = 0; i < count; ++i) {
      Range* range = range_holding(pointers[i]);
      if (range == nullptr) continue;
      const auto [first, last] = parts_spanned(*range, pointers[i], extents[i]);
      const Range* last_range = nullptr;
      for (std::size_t index = first; index <= last; ++index) each(*range, index, last_range);
    }
  };
  // The list first (it may run out of memory), then the marks.
  OtherDeviceUse use;
  each_block([&](Range& range, std::size_t index, const Range*& last_range) {
    if (range.blocks[index].swapped) append_merged(use.unswap, last_range, &range, part(range, index));
  });
  std::uint64_t named_bytes = 0;
  each_block([&](Range& range, std::size_t index, const Range*&) {
    named_bytes += part(range, index).bytes;
    Block& block = range.blocks[index];
    block.indirect = true;
    block.fresh_epoch = 0;
    use.after_placement = std::max(use.after_placement, block.placed_by);
    if (!block.swapped) return;
    block.swapped = false;
    swapped_bytes_ -= kBlockBytes;
    stats_.unswapped_bytes += kBlockBytes;
  });
  if (!use.unswap.empty()) ++stats_.unswaps;
  if (named_bytes != 0) {
    ++stats_.other_device_uses;
    stats_.other_device_bytes += named_bytes;
  }
  return use;
}

void LaunchOrderedResidency::on_buffer_returned(std::uint64_t address, std::uint64_t bytes,
                                                std::uint64_t stream) {
  // Swapped blocks count too (swapping may have stopped since): their store copies are released.
  if (!(options_.discard_dead || options_.place_fresh || options_.swap || swapped_bytes_ != 0) || bytes == 0)
    return;
  Range* range = range_holding(address);
  if (range == nullptr || address + bytes > range->address + range->bytes) return;  // not one managed range
  // Whole blocks only: the rest of a partly covered one may hold live neighbours.
  const BlockId first = block_of(address + kBlockBytes - 1);
  const BlockId end = block_of(address + bytes);
  for (BlockId id = first; id < end; ++id) {
    Block& block = range->blocks[id - block_of(range->address)];
    release_swapped(*range, id - block_of(range->address));  // nothing the program can read
    set_dead(*range, id - block_of(range->address), true);
    block.dead_stream = stream;
    block.dead_at = launch_seq_;
    block.fresh_epoch = 0;  // fresh again only once handed out whole
    stats_.dead_returned_bytes += kBlockBytes;
  }
}

void LaunchOrderedResidency::on_buffer_handed_out(std::uint64_t address, std::uint64_t bytes) {
  if (!(options_.discard_dead || options_.place_fresh || options_.swap) || bytes == 0) return;
  Range* range = range_holding(address);
  if (range == nullptr) return;
  const std::uint64_t end = std::min(address + bytes, range->address + range->bytes);
  for (BlockId id = block_of(address); id <= block_of(end - 1); ++id) {
    Block& block = range->blocks[id - block_of(range->address)];
    // A block the buffer covers in part may hold a live neighbour: never fresh.
    const bool whole = block_base(id) >= address && block_base(id) + kBlockBytes <= end;
    block.fresh_epoch = options_.place_fresh && whole && (block.dead || fresh(block)) ? fresh_epoch_ : 0;
    set_dead(*range, id - block_of(range->address), false);
    if (!whole) continue;
    // A new buffer: no pointer table holds it yet. A kernel that reached the old one through a
    // table named nothing, so a later move of the block follows every operation decided so far.
    if (std::exchange(block.indirect, false)) block.named_at = std::max(block.named_at, launch_seq_);
    block.unfollowed = Block::Unfollowed::none;
    block.others = {};
    block.others_lost = false;
  }
  note_live_bytes();
}

AddressRange LaunchOrderedResidency::part(const Range& range, std::size_t index) {
  const BlockId id = block_of(range.address) + index;
  const std::uint64_t lo = std::max(range.address, block_base(id));
  const std::uint64_t hi = std::min(range.address + range.bytes, block_base(id) + kBlockBytes);
  return {lo, hi - lo};
}

void LaunchOrderedResidency::make_resident(Range& range, std::size_t index) {
  Block& block = range.blocks[index];
  if (block.resident) {
    lru_.splice(lru_.end(), lru_, block.lru);  // most recently named now; no allocation
    return;
  }
  block.resident = true;
  block.lru = lru_.insert(lru_.end(), {&range, index});
  resident_bytes_ += part(range, index).bytes;
  if (block.dead) resident_dead_bytes_ += part(range, index).bytes;
}

void LaunchOrderedResidency::set_dead(Range& range, std::size_t index, bool dead) {
  Block& block = range.blocks[index];
  if (block.dead == dead) return;
  block.dead = dead;
  const std::uint64_t bytes = part(range, index).bytes;
  dead ? dead_bytes_ += bytes : dead_bytes_ -= bytes;
  if (block.resident) dead ? resident_dead_bytes_ += bytes : resident_dead_bytes_ -= bytes;
}

void LaunchOrderedResidency::note_live_bytes() {
  const std::uint64_t live = range_bytes_ - dead_bytes_;
  if (live > limit_) peak_over_limit_ = std::max(peak_over_limit_, live - limit_);
}

void LaunchOrderedResidency::unfollowed_by_move(Block& block, std::uint64_t stream) {
  if (block.unfollowed == Block::Unfollowed::any) return;  // only a hand-out clears it
  if (block.other_streams || block.indirect) {
    block.unfollowed = Block::Unfollowed::any;
  } else if (block.named_stream != stream) {
    block.unfollowed = Block::Unfollowed::one_stream;
    block.unfollowed_stream = block.named_stream;
  } else if (block.unfollowed == Block::Unfollowed::none || block.unfollowed_stream == stream) {
    // Named in this stream alone since it became resident (a naming elsewhere would have set
    // other_streams): this move follows all its users.
    block.unfollowed = Block::Unfollowed::none;
  }
}

void LaunchOrderedResidency::note_other_streams(Block& block, std::uint64_t stream) {
  // Named in its last stream again, the common case: nothing changes (named_stream is never among
  // `others`).
  if (block.named_at == 0 || block.named_stream == stream) return;
  using StreamOperation = LaunchEviction::StreamOperation;
  const auto slot_of = [&block](std::uint64_t s) {
    return std::find_if(block.others.begin(), block.others.end(),
                        [s](const StreamOperation& use) { return use.operation != 0 && use.stream == s; });
  };
  auto slot = slot_of(block.named_stream);
  if (slot == block.others.end())
    slot = std::find_if(block.others.begin(), block.others.end(),
                        [](const StreamOperation& use) { return use.operation == 0; });
  if (slot == block.others.end()) {
    block.others_lost = true;
  } else {
    *slot = {block.named_stream, block.named_at};
  }
  // Its namings in `stream` are named_at's to cover from now on.
  if (auto own = slot_of(stream); own != block.others.end()) *own = {};
}

bool LaunchOrderedResidency::follow_other_streams(const Block& block, std::uint64_t stream,
                                                  std::vector<LaunchEviction::StreamOperation>& users) const {
  if (!can_follow_ || block.others_lost) return false;
  // Users in `stream` itself come before the eviction's own start (evict_after_launch).
  if (block.named_stream != stream) users.push_back({block.named_stream, block.named_at});
  for (const LaunchEviction::StreamOperation& use : block.others) {
    if (use.operation != 0 && use.stream != stream) users.push_back(use);
  }
  return std::all_of(users.begin(), users.end(), [this](const LaunchEviction::StreamOperation& user) {
    return can_follow_(user.stream, user.operation);
  });
}

bool LaunchOrderedResidency::named_beside_unfollowed(const Block& block, std::uint64_t stream) {
  return block.unfollowed == Block::Unfollowed::any ||
         (block.unfollowed == Block::Unfollowed::one_stream && block.unfollowed_stream != stream);
}

void LaunchOrderedResidency::make_evicted(Range& range, std::size_t index) {
  Block& block = range.blocks[index];
  if (!block.resident) return;
  block.resident = false;
  block.other_streams = false;
  if (std::exchange(block.ahead, false)) ahead_unnamed_bytes_ -= kBlockBytes;
  lru_.erase(block.lru);
  resident_bytes_ -= part(range, index).bytes;
  if (block.dead) resident_dead_bytes_ -= part(range, index).bytes;
}

void LaunchOrderedResidency::release_swapped(Range& range, std::size_t index) {
  Block& block = range.blocks[index];
  if (!block.swapped) return;
  block.swapped = false;
  const AddressRange released = part(range, index);
  swapped_bytes_ -= released.bytes;
  released_.push_back(released);
}

std::vector<AddressRange> LaunchOrderedResidency::unswap_all() {
  std::vector<AddressRange> back;
  if (swapped_bytes_ == 0) return back;
  for (auto& [address, range] : ranges_) {
    const Range* last_range = nullptr;
    for (std::size_t index = 0; index < range.blocks.size(); ++index) {
      Block& block = range.blocks[index];
      if (!block.swapped) continue;
      block.swapped = false;
      const AddressRange swapped = part(range, index);
      swapped_bytes_ -= swapped.bytes;
      stats_.unswapped_bytes += swapped.bytes;
      append_merged(back, last_range, &range, swapped);
    }
  }
  if (!back.empty()) ++stats_.unswaps;
  return back;
}

std::vector<AddressRange> LaunchOrderedResidency::forget_fresh_and_unswap() {
  forget_fresh();
  return unswap_all();
}

void LaunchOrderedResidency::swap_refused(const std::vector<AddressRange>& blocks, bool store_full) {
  if (store_full) options_.swap = false;
  unmark_swapped(blocks);
}

template <typename Each>
void LaunchOrderedResidency::for_each_part(const std::vector<AddressRange>& ranges, Each&& each) {
  for (const AddressRange& wanted : ranges) {
    Range* range = range_holding(wanted.address);
    if (range == nullptr) continue;
    const std::size_t last = block_of(wanted.address + wanted.bytes - 1) - block_of(range->address);
    for (std::size_t index = block_of(wanted.address) - block_of(range->address);
         index <= last && index < range->blocks.size(); ++index)
      each(*range, index);
  }
}

void LaunchOrderedResidency::unmark_swapped(const std::vector<AddressRange>& blocks) {
  for_each_part(blocks, [this](Range& range, std::size_t index) {
    Block& block = range.blocks[index];
    if (!block.swapped) return;
    block.swapped = false;
    block.swapped_by = 0;  // never dropped
    swapped_bytes_ -= kBlockBytes;
    stats_.swapped_out_bytes -= std::min<std::uint64_t>(stats_.swapped_out_bytes, kBlockBytes);
  });
}

std::vector<AddressRange> LaunchOrderedResidency::stop_swapping() {
  options_.swap = false;
  return unswap_all();
}

UseHistory& UseHistory::operator=(UseHistory&& other) noexcept {
  if (this == &other) return *this;
  std::copy(std::begin(other.inline_), std::end(other.inline_), std::begin(inline_));
  heap_ = std::move(other.heap_);
  capacity_ = std::exchange(other.capacity_, kInline);
  head_ = std::exchange(other.head_, std::uint16_t{0});
  size_ = std::exchange(other.size_, std::uint16_t{0});
  dropped_ = std::exchange(other.dropped_, 0);
  return *this;
}

std::uint64_t UseHistory::at(std::size_t i) const {
  std::size_t slot = head_ + i;
  if (slot >= capacity_) slot -= capacity_;
  return slots()[slot];
}

void UseHistory::pop_oldest() {
  head_ = static_cast<std::uint16_t>(head_ + 1 == capacity_ ? 0 : head_ + 1);
  --size_;
}

void UseHistory::grow() {
  const std::size_t capacity = capacity_ == kInline ? 8 : 2 * std::size_t{capacity_};
  auto grown = std::make_unique<std::uint64_t[]>(capacity);
  for (std::size_t i = 0; i < size_; ++i) grown[i] = at(i);
  heap_ = std::move(grown);
  capacity_ = static_cast<std::uint16_t>(capacity);
  head_ = 0;
}

void UseHistory::add(std::uint64_t now, std::uint64_t keep) {
  while (size_ != 0 && at(0) + keep <= now) pop_oldest();
  if (size_ == kMaxUses) {
    dropped_ = at(0);
    pop_oldest();
  }
  if (size_ == capacity_) grow();
  std::size_t slot = head_ + size_;
  if (slot >= capacity_) slot -= capacity_;
  slots()[slot] = now;
  ++size_;
}

std::size_t UseHistory::first_not_before(std::uint64_t operation) const {
  std::size_t low = 0, high = size_;  // kept in rising order
  while (low < high) {
    const std::size_t middle = (low + high) / 2;
    if (at(middle) < operation) {
      low = middle + 1;
    } else {
      high = middle;
    }
  }
  return low;
}

std::uint64_t UseHistory::first_after(std::uint64_t since) const {
  if (since == UINT64_MAX) return 0;
  const std::size_t i = first_not_before(since + 1);
  return i == size_ ? 0 : at(i);
}

bool UseHistory::contains(std::uint64_t operation) const {
  const std::size_t i = first_not_before(operation);
  return i != size_ && at(i) == operation;
}

std::uint64_t LaunchOrderedResidency::planning_period() const {
  // A period the history does not cover yet would predict each block's next use from namings it
  // no longer holds, and copy back nothing ahead: planning goes on with the loop it had until the
  // history covers the new one (GPT-2 350M's loop of one step growing to four, BERT-large's to two
  // and four, made the steps after it 20-70% slower).
  const std::uint64_t learned = learned_period();
  return learned <= history_covered(launch_seq_) || covered_period_ == 0 ? learned : covered_period_;
}

std::uint64_t LaunchOrderedResidency::learned_period() const {
  if (loop_by_address_.period() != 0) return loop_by_address_.period();
  // A shorter loop of shapes is a run of identical layers inside a step, whose blocks differ from
  // layer to layer; a longer one is planned with only while most blocks named were named exactly
  // one period earlier too (in a 1B Llama's step, 9 namings in 10).
  const std::uint64_t by_shape = loop_by_shape_.period();
  return by_shape >= kMinShapePeriod && blocks_repeat_ ? by_shape : 0;
}

std::uint64_t LaunchOrderedResidency::predicted_next_use(const Block& block, std::uint64_t now,
                                                         std::uint64_t period) {
  if (period == 0 || block.uses.empty()) return 0;
  const std::uint64_t since = now > period ? now - period : 0;
  // Named more often in the last period than the history keeps: named again soon.
  if (block.uses.dropped_after(since)) return now + 1;
  // One period after its earliest naming in the last period (none: it missed its loop).
  const std::uint64_t earliest = block.uses.first_after(since);
  return earliest == 0 ? 0 : earliest + period;
}

std::vector<LaunchOrderedResidency::LruEntry> LaunchOrderedResidency::victim_order(std::uint64_t bytes,
                                                                                   std::uint64_t now,
                                                                                   std::size_t& unpredicted) {
  std::vector<LruEntry> order;
  order.reserve(lru_.size());
  const std::uint64_t period = options_.victims_by_next_use ? planning_period() : 0;
  struct Predicted {
    std::uint64_t next_use;
    std::size_t lru_position;  // ties go least recently named first, whatever the sort's internals
    LruEntry entry;
  };
  std::vector<Predicted> predicted;
  for (const LruEntry& entry : lru_) {
    const Block& block = entry.first->blocks[entry.second];
    if (block.named_at == now) continue;  // the operation about to run needs it
    // Copied back ahead by this decision: its copy back is issued after the decision's eviction.
    if (block.placed_by > placements_before_decision_) continue;
    if (block.named_at >= enqueued_below_) {
      ++stats_.victims_unenqueued_blocks;  // a move now would land before that operation
      continue;
    }
    const std::uint64_t next = next_use_oracle_
                                   ? next_use_oracle_(part(*entry.first, entry.second).address, now)
                                   : predicted_next_use(block, now, period);
    if (next == 0) {
      order.push_back(entry);
    } else {
      predicted.push_back({next, predicted.size(), entry});
    }
  }
  unpredicted = order.size();
  // Furthest first; only as many as the bytes can need are ordered (parts of blocks two
  // allocations share are smaller than a block, hence the slack).
  const std::size_t wanted = std::min<std::size_t>(predicted.size(), 2 * (bytes / kBlockBytes) + 64);
  // Only those are sorted; the rest keep the least-recently-named order (dead victims may come from
  // them). Selecting first and sorting the few costs a fraction of a partial sort, for which the
  // rising next uses along that list are the worst input.
  const auto furthest_first = [](const Predicted& a, const Predicted& b) {
    return a.next_use != b.next_use ? a.next_use > b.next_use : a.lru_position < b.lru_position;
  };
  const auto end_of_wanted = predicted.begin() + static_cast<std::ptrdiff_t>(wanted);
  if (wanted != 0 && wanted < predicted.size()) {
    std::vector<Predicted> keys = predicted;
    std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(wanted - 1), keys.end(),
                     furthest_first);
    const Predicted last_wanted = keys[wanted - 1];  // the order is total: exactly `wanted` reach it
    std::stable_partition(predicted.begin(), predicted.end(),
                          [&](const Predicted& p) { return !furthest_first(last_wanted, p); });
  }
  std::sort(predicted.begin(), end_of_wanted, furthest_first);
  for (const Predicted& p : predicted) order.push_back(p.entry);
  return order;
}

std::uint64_t LaunchOrderedResidency::spare_after(std::uint64_t now) const {
  const std::uint64_t period = options_.victims_by_next_use ? planning_period() : 0;
  // Nothing predicted: least recently named, as before. A loop the copies back ahead see whole:
  // whatever the spare room takes comes back ahead of its use, and the room lets them start.
  if (period == 0 || period <= options_.ahead_operations) return 0;
  return now + period / 2;
}

void LaunchOrderedResidency::choose_victims(std::uint64_t bytes, std::uint64_t now, std::uint64_t stream,
                                            LaunchEviction& decision, std::uint64_t needed,
                                            std::uint64_t spare_after, bool live_only) {
  std::vector<LruEntry> dead, live, swapped;
  std::uint64_t covered = 0;
  std::size_t unpredicted = 0;
  const std::vector<LruEntry> order = victim_order(bytes, now, unpredicted);
  // An operation not enqueued yet that may reach memory it does not name: a copy out now would
  // come before it in its stream.
  const bool swaps_held = latest_unnamed_ >= enqueued_below_ && !unnamed_now_;
  bool held_one = false;  // a victim written back that would have been swapped
  std::vector<LaunchEviction::StreamOperation> followed;  // one victim's users in other streams
  const auto merge_follow = [&decision](const std::vector<LaunchEviction::StreamOperation>& users) {
    for (const LaunchEviction::StreamOperation& user : users) {
      auto& all = decision.after_other_streams;
      auto known =
          std::find_if(all.begin(), all.end(), [&](const auto& f) { return f.stream == user.stream; });
      if (known == all.end()) {
        all.push_back(user);
      } else {
        known->operation = std::max(known->operation, user.operation);
      }
    }
  };
  const auto take = [&](bool dead_only) {
    for (std::size_t i = 0; i < order.size() && covered < bytes; ++i) {
      auto [range, index] = order[i];
      const Block& block = range->blocks[index];
      if (!block.resident) continue;  // taken by the pass for dead blocks
      // Dropping dead contents is safe only after their last users: those on the stream the
      // allocator took them back on, which the eviction follows.
      const bool droppable = options_.discard_dead && block.dead && block.dead_stream == stream;
      if ((dead_only && !droppable) || (live_only && block.dead)) continue;
      if (!droppable && covered >= needed && spare_after != 0) {
        const std::uint64_t next = predicted_next_use(block, now, planning_period());
        if ((next != 0 || live_only) && next <= spare_after) {
          ++stats_.spare_victims_skipped_blocks;
          continue;
        }
      }
      const std::uint64_t part_bytes = part(*range, index).bytes;
      // Swapped: a whole block (the GPU copy is dropped by whole pages), while the store has
      // room, whose users the copy and the drop follow: those in this stream, and those in other
      // streams where the follower can order the swap after them (a kernel there could still be
      // using it).
      bool swap = false;
      if (!droppable && options_.swap && !unnamed_now_ && part_bytes == kBlockBytes) {
        const bool other_streams = block.other_streams || block.named_stream != stream;
        followed.clear();
        if (block.indirect || (other_streams && !follow_other_streams(block, stream, followed))) {
          stats_.swap_skipped_other_stream_bytes += part_bytes;
        } else if (swaps_held) {
          held_one = true;
        } else {
          swap = swapped_bytes_ + part_bytes <= options_.swap_bytes;
        }
        if (swap && other_streams) {
          stats_.swapped_after_other_streams_bytes += part_bytes;
          merge_follow(followed);
        }
      }
      (droppable ? dead : swap ? swapped : live).push_back(order[i]);
      if (droppable) {
        decision.discard_after_eviction = std::max(decision.discard_after_eviction, block.evicted_by);
        decision.discard_after_launch =
            std::max({decision.discard_after_launch, block.dead_at, block.named_at});
      }
      if (swap) {
        range->blocks[index].swapped = true;
        swapped_bytes_ += part_bytes;
        stats_.swapped_out_bytes += part_bytes;
      }
      if (!droppable) {
        (i < unpredicted ? stats_.victims_unpredicted_bytes : stats_.victims_predicted_bytes) += part_bytes;
        decision.evict_after_placement = std::max(decision.evict_after_placement, block.placed_by);
      }
      covered += part_bytes;
      // The move follows this stream's users only (a discard, all its work so far; an eviction or
      // a swap, the victims' last namings in it).
      unfollowed_by_move(range->blocks[index], stream);
      make_evicted(*range, index);
    }
  };
  // Dead blocks first, whatever their age: dropping one costs nothing, writing one back a copy.
  if (options_.discard_dead && !live_only) take(true);
  take(false);
  if (held_one) ++stats_.swaps_held_by_unenqueued;
  // In address order, neighbours merged within one range.
  const auto merge = [](std::vector<LruEntry>& chosen, std::vector<AddressRange>& merged) {
    std::sort(chosen.begin(), chosen.end(), [](const LruEntry& a, const LruEntry& b) {
      return part(*a.first, a.second).address < part(*b.first, b.second).address;
    });
    const Range* last_range = nullptr;
    for (auto [range, index] : chosen) append_merged(merged, last_range, range, part(*range, index));
  };
  merge(dead, decision.discard);
  merge(live, decision.evict);
  merge(swapped, decision.swap_out);
  stats_.swap_peak_bytes = std::max(stats_.swap_peak_bytes, swapped_bytes_);
  if (!live.empty() || !swapped.empty()) decision.eviction_number = ++evictions_decided_;
  for (const std::vector<LruEntry>* moved : {&live, &swapped}) {
    for (auto [range, index] : *moved) {
      decision.evict_after_launch = std::max(decision.evict_after_launch, range->blocks[index].named_at);
      range->blocks[index].evicted_by = decision.eviction_number;
      range->blocks[index].swapped_by = moved == &swapped ? decision.eviction_number : 0;
    }
  }
  // A driver's move beside a kernel using the memory is only slower; a copy out is stale.
  if (auto it = unnamed_at_.find(stream); it != unnamed_at_.end() && !swapped.empty())
    decision.evict_after_launch = std::max(decision.evict_after_launch, it->second);
  for (const AddressRange& range : decision.discard) stats_.discarded_bytes += range.bytes;
}

std::uint64_t LaunchOrderedResidency::fresh_users_before(const Block& block, std::uint64_t stream) const {
  if (!fresh(block)) return kNotFresh;
  // Never named nor taken back since its range was allocated: no user (an unnamed one would have
  // ended its freshness). named_at also covers a pointer table's kernels (on_buffer_handed_out).
  if (block.dead_at == 0) return block.named_at == 0 ? 0 : kUsersInAnotherStream;
  // Taken back before it was handed out again: its users come before that, in that stream.
  if (block.dead_stream != stream) return kUsersInAnotherStream;
  return std::max(block.dead_at, block.named_at);
}

std::uint64_t LaunchOrderedResidency::name(std::uint64_t pointer, std::uint64_t extent, std::uint64_t now,
                                           std::uint64_t stream) {
  Range* held = range_holding(pointer);
  if (held == nullptr) return 0;  // not managed memory
  Range& range = *held;
  // Tensor size unknown (extent 0: no allocator inside the program to follow): to the end of its
  // allocation.
  const auto [first, last] = parts_spanned(range, pointer, extent);
  std::uint64_t new_bytes = 0;
  for (std::size_t index = first; index <= last; ++index) {
    Block& block = range.blocks[index];
    if (naming_indirect_) block.indirect = true;
    if (block.named_at == now) continue;
    const std::uint64_t fresh_users = fresh_users_before(block, stream);
    if ((block.resident && block.named_stream != stream) || named_beside_unfollowed(block, stream))
      block.other_streams = true;
    note_other_streams(block, stream);
    block.named_at = now;
    block.named_stream = stream;
    record_use(block, range, index, now);
    if (std::exchange(block.ahead, false)) ahead_unnamed_bytes_ -= kBlockBytes;
    if (!block.resident) new_bytes += part(range, index).bytes;
    // Its store copy was released (it died while its swap was in flight): nothing restores it, so
    // nothing else orders this operation after the swap's drop.
    if (!block.resident && !block.swapped && block.swapped_by != 0)
      named_after_drop_ = std::max(named_after_drop_, block.swapped_by);
    named_.emplace_back(&range, index);
    named_after_placement_ = std::max(named_after_placement_, block.placed_by);
    // Whatever this launch does with it, it holds the program's data from here on.
    named_fresh_.push_back(fresh_users);
    block.fresh_epoch = 0;
  }
  return new_bytes;
}

std::vector<AddressRange> LaunchOrderedResidency::begin_naming(bool unnamed, bool may_evict) {
  named_.clear();
  named_fresh_.clear();
  named_after_placement_ = 0;
  named_after_drop_ = 0;
  unnamed_now_ = unnamed;
  begin_recording(launch_seq_);
  // It may reach blocks it does not name: none may stay fresh or swapped.
  std::vector<AddressRange> unswap;
  if (unnamed) unswap = forget_fresh_and_unswap();
  // Nothing can be ordered before it (a stream capture runs): what it names must not stay swapped
  // (swapped earlier, even where swapping has stopped since).
  if (!may_evict && swapped_bytes_ != 0) {
    std::vector<AddressRange> rest = unswap_all();
    unswap.insert(unswap.end(), rest.begin(), rest.end());
  }
  return unswap;
}

LaunchEviction LaunchOrderedResidency::before_launch(const KernelLaunch& launch, bool may_evict,
                                                     const LaunchPointers* every) {
  const std::uint64_t now = ++launch_seq_;
  observe(now, launch_address_signature(launch), launch_shape_signature(launch));
  // Every pointer, where the launch holds more than it keeps and none was lost.
  const bool whole_list = every != nullptr && every->complete && every->count > launch.pointer_count;
  // Pointers past the kept ones (a foreach kernel's outputs come after its inputs), or none found:
  // it may write blocks it does not name, which must not be placed (dropped) later, and read
  // blocks it does not name, which must not be swapped.
  const bool unnamed = (launch.pointers_truncated && !whole_list) || launch.unnamed_memory;
  if (unnamed) unnamed_at_[launch.stream] = latest_unnamed_ = now;
  std::vector<AddressRange> unswap = begin_naming(unnamed, may_evict);
  std::uint64_t new_bytes = 0;
  if (whole_list) {
    for (std::size_t i = 0; i < every->count; ++i)
      new_bytes += name(every->pointers[i], every->extents[i], now, launch.stream);
  } else {
    for (std::size_t i = 0; i < launch.pointer_count; ++i)
      new_bytes += name(launch.pointers[i], launch.extents[i], now, launch.stream);
  }
  LaunchEviction decision = decide(new_bytes, now, launch.stream, may_evict);
  decision.after_every_placement = unnamed;
  decision.unswap = std::move(unswap);
  return decision;
}

LaunchEviction LaunchOrderedResidency::before_copy(const CopyLaunch& copy, bool may_evict,
                                                   const LaunchPointers* referenced) {
  const std::uint64_t now = ++launch_seq_;
  observe(now, copy_address_signature(copy), copy_shape_signature(copy));
  ++stats_.copies;
  // A table cut short may point at blocks not listed: as an unseen write, none stays fresh or swapped.
  const bool unnamed = copy.unnamed_memory || (referenced != nullptr && !referenced->complete);
  if (unnamed) unnamed_at_[copy.stream] = latest_unnamed_ = now;
  std::vector<AddressRange> unswap = begin_naming(unnamed, may_evict);
  std::uint64_t new_bytes = 0;
  if (copy.bytes != 0) {
    for (std::size_t i = 0; i < copy.operand_count && i < CopyLaunch::kMaxOperands; ++i)
      new_bytes += name(copy.operands[i], copy.bytes, now, copy.stream);
  }
  if (referenced != nullptr) {
    naming_indirect_ = true;
    for (std::size_t i = 0; i < referenced->count; ++i)
      new_bytes += name(referenced->pointers[i], referenced->extents[i], now, copy.stream);
    naming_indirect_ = false;
  }
  LaunchEviction decision = decide(new_bytes, now, copy.stream, may_evict);
  decision.after_every_placement = unnamed;
  decision.unswap = std::move(unswap);
  return decision;
}

std::uint64_t LaunchOrderedResidency::eviction_batch() const {
  // Never more than the live ranges exceed the limit by (and a block): past that, all the rest
  // fits. Near 1x a batch of the limit's eighth would evict what the next launches name, each
  // time the program goes a few blocks over.
  const std::uint64_t excess = range_bytes_ > limit_ ? range_bytes_ - limit_ : 0;
  const std::uint64_t blocks = (excess + kBlockBytes - 1) / kBlockBytes + 1;
  return std::min(batch_, blocks * kBlockBytes);
}

LaunchEviction LaunchOrderedResidency::decide(std::uint64_t new_bytes, std::uint64_t now,
                                              std::uint64_t stream, bool may_evict) {
  ++stats_.launches;
  placements_before_decision_ = placements_decided_;
  LaunchEviction decision;
  decision.after_placement = named_after_placement_;
  decision.after_drop = named_after_drop_;
  std::uint64_t projected = resident_bytes_ + pending_bytes_ + new_bytes;
  if (may_evict && projected > limit_ && !pending_.empty()) {
    // The room of the oldest evictions in flight is needed now (they finish in the order issued).
    ++stats_.waits_for_pending;
    while (!pending_.empty() && projected > limit_) {
      decision.wait_for_eviction = pending_.front().number;
      room_freed_by_ = std::max(room_freed_by_, pending_.front().number);
      projected -= pending_.front().bytes;
      pending_bytes_ -= pending_.front().bytes;
      pending_.pop_front();
    }
  }
  const std::uint64_t before = resident_bytes_;
  const std::uint64_t batch = eviction_batch();
  // Room kept ahead of the launches: a batch per eviction allowed in flight.
  const std::uint64_t ahead = std::min<std::uint64_t>(limit_, batch * std::max(options_.evictions_ahead, 1U));
  if (may_evict && projected > limit_) {
    // Still over: evict a batch below the limit, and the launch waits for it. Its spare room, past
    // what the launch needs, only from parts not needed soon.
    choose_victims(projected - (limit_ - batch), now, stream, decision, projected - limit_, spare_after(now));
    // Nothing to evict (the launch names every resident block): nothing to wait for.
    decision.wait_for_evict = !decision.evict.empty() || !decision.swap_out.empty();
    if (decision.wait_for_evict) {
      ++stats_.waited_evictions;
      room_freed_by_ = std::max(room_freed_by_, decision.eviction_number);
    }
  } else if (may_evict && wants_eviction_ahead(resident_bytes_ + new_bytes, now, ahead)) {
    evict_ahead(batch, now, stream, decision);
  } else if (may_evict) {
    evict_for_peak(now, stream, decision);
  }
  stats_.evicted_bytes += before - resident_bytes_;
  if (resident_bytes_ != before) ++stats_.evictions;
  if ((options_.prefetch || options_.place_fresh || swapped_bytes_ != 0) && may_evict) plan_fetch(decision);
  for (auto [range, index] : named_) make_resident(*range, index);
  remember_named(now);
  if (may_evict) {
    plan_ahead(decision, now);
    // The copies back ahead may have taken the room of the eviction in flight: the next one is
    // decided now, not at the next launch, so that the eviction thread has it before it has
    // dropped the one before. Decided later, it came after the program's wait for that room, and
    // the link to the host stood idle meanwhile (a quarter of each array's turn in the CUDA sweep).
    const std::uint64_t held = resident_bytes_;
    if (decision.eviction_number == 0 && !decision.restore_ahead.empty() &&
        wants_eviction_ahead(held, now, ahead)) {
      evict_ahead(batch, now, stream, decision);
      stats_.evicted_bytes += held - resident_bytes_;
      if (resident_bytes_ != held) ++stats_.evictions;
    }
  }
  if (resident_bytes_ > limit_) ++stats_.launches_over_limit;
  stats_.peak_bytes = std::max(stats_.peak_bytes, resident_bytes_ + pending_bytes_);
  return decision;
}

bool LaunchOrderedResidency::wants_eviction_ahead(std::uint64_t held, std::uint64_t now,
                                                  std::uint64_t ahead) const {
  // Within `ahead` of the limit (what is in flight counted free), with room for one more in flight.
  return range_bytes_ > limit_ && pending_.size() < std::max(options_.evictions_ahead, 1U) &&
         held > limit_ - ahead && upcoming_needs_room(now);
}

void LaunchOrderedResidency::evict_ahead(std::uint64_t batch, std::uint64_t now, std::uint64_t stream,
                                         LaunchEviction& decision) {
  // A batch alongside the program, waited for only when the room is needed (discards are always
  // waited for: they free their room at once).
  choose_victims(batch, now, stream, decision);
  if (decision.evict.empty() && decision.swap_out.empty()) return;
  pending_.push_back(
      {decision.eviction_number, total_bytes(decision.evict) + total_bytes(decision.swap_out)});
  pending_bytes_ += pending_.back().bytes;
}

void LaunchOrderedResidency::plan_fetch(LaunchEviction& decision) {
  // What fits beside what stays resident and what the eviction in flight still holds.
  const std::uint64_t held = resident_bytes_ + pending_bytes_;
  const std::uint64_t room = limit_ > held ? limit_ - held : 0;
  // A fresh part is placed when it is a whole block (the driver drops and places whole pages);
  // without prefetching, only fresh parts move.
  const auto placed = [this](std::size_t i) {
    return options_.place_fresh && named_fresh_[i] != kNotFresh &&
           part(*named_[i].first, named_[i].second).bytes == kBlockBytes;
  };
  std::uint64_t wanted_bytes = 0;
  for (std::size_t i = 0; i < named_.size(); ++i) {
    auto [range, index] = named_[i];
    const Block& block = range->blocks[index];
    if (!block.resident && (options_.prefetch || placed(i) || block.swapped))
      wanted_bytes += part(*range, index).bytes;
  }
  // More than fits: which parts the launch really touches is unknown (a gather over a large
  // tensor reads a fraction of it), so nothing is copied; it faults in what it touches. Fresh
  // blocks are placed all the same: the launch writes them (they hold nothing else), so faulting
  // them in would make them resident too, only slower (a dropped page faults in 4-64 KiB at a
  // time: GPT-2's softmax backward at 3x ran 10x longer), and a placement copies nothing.
  const bool fits = wanted_bytes <= room;
  if (!fits) stats_.fetch_skipped_bytes += wanted_bytes;
  // named_ runs by pointer and, within one, by block: consecutive parts of one range merge.
  const Range* last_fetched = nullptr;
  const Range* last_placed = nullptr;
  const Range* last_restored = nullptr;
  for (std::size_t i = 0; i < named_.size(); ++i) {
    auto [range, index] = named_[i];
    const Block& block = range->blocks[index];
    if (block.resident) continue;
    if (block.swapped && !placed(i)) {
      // Its contents are in the store alone: copied back whether it fits or not.
      if (!fits) stats_.fetch_skipped_bytes -= kBlockBytes;
      append_merged(decision.restore, last_restored, range, part(*range, index));
      range->blocks[index].swapped = false;
      swapped_bytes_ -= kBlockBytes;
      stats_.restored_bytes += kBlockBytes;
      range->blocks[index].placed_by = placements_decided_ + 1;
      decision.place_after_eviction = std::max(decision.place_after_eviction, block.evicted_by);
    } else if (placed(i)) {
      if (!fits) stats_.fetch_skipped_bytes -= kBlockBytes;
      release_swapped(*range, index);  // fresh: what the store holds is not needed
      append_merged(decision.place, last_placed, range, part(*range, index));
      range->blocks[index].placed_by = placements_decided_ + 1;
      decision.place_after_eviction = std::max(decision.place_after_eviction, block.evicted_by);
      if (named_fresh_[i] == kUsersInAnotherStream) {
        decision.place_after_stream_work = true;
      } else {
        decision.place_after_launch = std::max(decision.place_after_launch, named_fresh_[i]);
      }
      stats_.placed_bytes += kBlockBytes;
    } else if (options_.prefetch && fits) {
      append_merged(decision.fetch, last_fetched, range, part(*range, index));
      stats_.fetched_bytes += part(*range, index).bytes;
    } else {
      continue;
    }
    // Moving blocks an eviction in flight still moves out would race it: waited for too.
    if (block.evicted_by != 0 && pending(block.evicted_by))
      decision.fetch_waits_for_eviction = std::max(decision.fetch_waits_for_eviction, block.evicted_by);
  }
  if (!decision.place.empty() || !decision.restore.empty()) decision.placement_number = ++placements_decided_;
  if (!decision.fetch.empty() || !decision.place.empty() || !decision.restore.empty()) ++stats_.fetches;
}

void LaunchOrderedResidency::remember_named(std::uint64_t now) {
  if (!options_.swap || !options_.restore_ahead) return;  // only plan_ahead reads it
  // A period's worth (before one is learned, a few thousand operations: a longer loop is
  // predicted from its second period on).
  const std::uint64_t keep = history_length();
  NamedBy entry;
  if (!named_history_.empty() && named_history_.front().operation + keep <= now) {
    entry = std::move(named_history_.front());  // its storage reused
    named_history_.pop_front();
  }
  while (!named_history_.empty() && named_history_.front().operation + keep <= now)
    named_history_.pop_front();
  entry.operation = now;
  entry.live_bytes = range_bytes_ - dead_bytes_;
  entry.parts.clear();
  for (auto [range, index] : named_)
    entry.parts.push_back({range->address, static_cast<std::uint32_t>(index)});
  named_history_.push_back(std::move(entry));
}

bool LaunchOrderedResidency::upcoming_needs_room(std::uint64_t now) const {
  const std::uint64_t period = planning_period();
  if (!options_.swap || !options_.restore_ahead || period < 2 || named_history_.empty()) return true;
  // The next operation not planned for yet, as it was one period ago.
  const std::uint64_t earlier = std::max(planned_ahead_to_, now) + 1 - period;
  const std::uint64_t first = named_history_.front().operation;
  if (earlier < first || earlier - first >= named_history_.size()) return true;  // not known
  for (const NamedPart& part : named_history_[earlier - first].parts) {
    auto it = ranges_.find(part.address);
    if (it != ranges_.end() && part.index < it->second.blocks.size() &&
        !it->second.blocks[part.index].resident)
      return true;
  }
  return false;
}

void LaunchOrderedResidency::plan_ahead(LaunchEviction& decision, std::uint64_t now) {
  const std::uint64_t period = planning_period();
  if (!options_.swap || !options_.restore_ahead || period < 2 || swapped_bytes_ == 0 ||
      named_history_.empty())
    return;
  // What comes back ahead and is not named yet stays within a batch (the room of an eviction kept
  // ahead): far enough for the copies to arrive in time, near enough that the victims making room
  // for it are needed later than it is.
  if (ahead_unnamed_bytes_ >= batch_) return;
  std::uint64_t budget = batch_ - ahead_unnamed_bytes_;
  const auto free_room = [this] {
    const std::uint64_t held = resident_bytes_ + pending_bytes_;
    return limit_ > held ? limit_ - held : 0;
  };
  planned_ahead_to_ = std::max(planned_ahead_to_, now);
  std::vector<std::pair<Range*, std::size_t>> blocks;
  const Range* last = nullptr;
  // No further than ahead_operations: blocks copied back for operations far ahead take the room of
  // nearer ones, whose victims are then needed sooner than they are.
  const std::uint64_t horizon = std::min<std::uint64_t>(period, options_.ahead_operations);
  while (planned_ahead_to_ + 1 < now + horizon) {
    // The operation that comes next, as it was one period ago.
    const std::uint64_t earlier = planned_ahead_to_ + 1 - period;
    const std::uint64_t first = named_history_.front().operation;
    if (earlier >= first && earlier - first < named_history_.size()) {
      blocks.clear();
      for (const NamedPart& part : named_history_[earlier - first].parts) {
        auto it = ranges_.find(part.address);
        if (it != ranges_.end() && part.index < it->second.blocks.size() &&
            it->second.blocks[part.index].swapped)
          blocks.emplace_back(&it->second, part.index);
      }
      const std::uint64_t needed = blocks.size() * kBlockBytes;
      // Later, from here: past the budget, or once evictions have made room.
      if (needed > budget || resident_bytes_ + needed > limit_) break;
      // Into free room, else into the room of evictions running alongside the program: the copies
      // back wait for them (they finish in order), and no launch has to.
      while (needed > free_room() && !pending_.empty()) {
        decision.ahead_after_eviction = std::max(decision.ahead_after_eviction, pending_.front().number);
        pending_bytes_ -= pending_.front().bytes;
        pending_.pop_front();
      }
      for (auto [range, index] : blocks) {
        Block& block = range->blocks[index];
        append_merged(decision.restore_ahead, last, range, part(*range, index));
        block.swapped = false;
        swapped_bytes_ -= kBlockBytes;
        stats_.restored_ahead_bytes += kBlockBytes;
        block.ahead = true;
        ahead_unnamed_bytes_ += kBlockBytes;
        block.placed_by = placements_decided_ + 1;
        decision.ahead_after_eviction = std::max(decision.ahead_after_eviction, block.evicted_by);
        make_resident(*range, index);
      }
      budget -= needed;
    }
    ++planned_ahead_to_;
  }
  if (decision.restore_ahead.empty()) return;
  decision.ahead_placement_number = ++placements_decided_;
  // Into room the model counts free: the evictions it comes from must be done, though no launch of
  // the program's that waits for them may have run yet.
  decision.ahead_after_eviction = std::max(decision.ahead_after_eviction, room_freed_by_);
  room_freed_by_ = std::max(room_freed_by_, decision.ahead_after_eviction);
}

void LaunchOrderedResidency::observe(std::uint64_t now, std::uint64_t by_address, std::uint64_t by_shape) {
  if (!options_.victims_by_next_use) return;
  loop_by_address_.observe(now, by_address);
  loop_by_shape_.observe(now, by_shape);
  stats_.loop_period = loop_by_address_.period();
  stats_.shape_loop_period = loop_by_shape_.period();
  const std::uint64_t longest = std::max(loop_by_address_.period(), loop_by_shape_.period());
  if (longest > longest_period_) {
    covered_at_growth_ = history_covered(now);
    history_grown_at_ = now;
    longest_period_ = longest;
  }
}

std::uint64_t LaunchOrderedResidency::history_length() const {
  return std::max(longest_period_ + 1, kMinHistory);
}

std::uint64_t LaunchOrderedResidency::history_covered(std::uint64_t now) const {
  const std::uint64_t before = history_grown_at_ == 0 ? kMinHistory : covered_at_growth_;
  return std::min(history_length(), before + (now - history_grown_at_));
}

void LaunchOrderedResidency::begin_recording(std::uint64_t now) {
  recording_keep_ = history_length();
  if (const std::uint64_t learned = learned_period(); learned <= history_covered(now))
    covered_period_ = learned;
  stats_.planning_period = planning_period();
  const std::uint64_t by_shape = loop_by_shape_.period();
  checking_period_ =
      options_.victims_by_next_use && by_shape >= kMinShapePeriod && now > by_shape ? by_shape : 0;
  if (checking_period_ != 0 && checking_period_ != repeats_period_) {
    repeats_period_ = checking_period_;
    repeats_checked_ = repeats_hit_ = 0;
  }
  named_loop_ago_ = nullptr;
  if (checking_period_ != 0 && !named_history_.empty()) {
    const std::uint64_t earlier = now - checking_period_, first = named_history_.front().operation;
    if (earlier >= first && earlier - first < named_history_.size() &&
        named_history_[earlier - first].operation == earlier)
      named_loop_ago_ = &named_history_[earlier - first].parts;
  }
}

bool LaunchOrderedResidency::named_one_loop_ago(const Block& block, const Range& range, std::size_t index,
                                                std::uint64_t operation) const {
  // That operation's entry says whether it named the block, without a search through the block's
  // ring, whose probes each read a line of memory the program's own work has pushed out of the
  // caches. Where the loop repeats, it named the same parts in the same order (read in step with
  // named_); a short entry is looked through whole (a loop of shapes a layer long names other
  // blocks each time). Where the part it names was another range's, freed since, this block's
  // namings all came after the operation, and keeps_naming says no.
  const std::vector<NamedPart>* then = named_loop_ago_;
  const NamedPart part{range.address, static_cast<std::uint32_t>(index)};
  const std::size_t at = named_.size();
  const bool in_step = then != nullptr && at < then->size() && (*then)[at] == part;
  if (!in_step && (then == nullptr || then->size() > kPartsLookedThrough))
    return block.uses.contains(operation);
  const bool named = in_step || std::find(then->begin(), then->end(), part) != then->end();
  return named && block.uses.keeps_naming(operation);
}

void LaunchOrderedResidency::record_use(Block& block, const Range& range, std::size_t index,
                                        std::uint64_t now) {
  if (const std::uint64_t by_shape = checking_period_; by_shape != 0) {
    ++stats_.namings_checked;
    ++repeats_checked_;
    if (named_one_loop_ago(block, range, index, now - by_shape)) {
      ++stats_.namings_repeated;
      ++repeats_hit_;
    }
    // The latest several thousand namings count, the older ones less and less.
    if (repeats_checked_ >= kRepeatWindow) {
      repeats_checked_ /= 2;
      repeats_hit_ /= 2;
    }
    blocks_repeat_ = repeats_checked_ >= kRepeatWindow / 4 && 2 * repeats_hit_ >= repeats_checked_;
  }
  block.uses.add(now, recording_keep_);
}

std::vector<AddressRange> LaunchOrderedResidency::last_named() const {
  std::vector<AddressRange> named;
  const Range* last_range = nullptr;
  for (auto [range, index] : named_) append_merged(named, last_range, range, part(*range, index));
  return named;
}

void LaunchOrderedResidency::evictions_ended(std::uint64_t number) {
  while (!pending_.empty() && pending_.front().number <= number) {
    pending_bytes_ -= pending_.front().bytes;
    pending_.pop_front();
  }
}

std::uint64_t LaunchOrderedResidency::room_short_at_peak(std::uint64_t now, std::uint64_t& peak_at) {
  const std::uint64_t period = planning_period();
  if (period < 2 || now <= period || named_history_.empty()) return 0;
  const std::uint64_t first = named_history_.front().operation, known = first + named_history_.size();
  const std::uint64_t base = now - period;  // this operation, one loop earlier
  if (base < first || base >= known) return 0;
  // The operations after this one, up to half a step, as one loop earlier: their largest live
  // bytes. A loop of several steps repeats a loop of shapes (a step): half of it would reach the
  // next step's peak from the backward, and evict for it what this step still needs.
  const std::uint64_t shapes = loop_by_shape_.period();
  const bool steps = shapes >= kMinShapePeriod && shapes < period && period % shapes == 0;
  const std::uint64_t reach = (steps ? shapes : period) / 2;
  if (period != peak_period_ || reach != peak_reach_) {
    peak_window_.clear();  // a new loop: scanned again
    peak_period_ = period;
    peak_reach_ = reach;
    peak_scanned_to_ = base;
  }
  const std::uint64_t to = std::min(base + reach, known - 1);
  for (std::uint64_t op = std::max(peak_scanned_to_, base) + 1; op <= to; ++op) {
    const std::uint64_t live = named_history_[op - first].live_bytes;
    while (!peak_window_.empty() && peak_window_.back().second <= live) peak_window_.pop_back();
    peak_window_.emplace_back(op, live);
  }
  peak_scanned_to_ = std::max(peak_scanned_to_, to);
  while (!peak_window_.empty() && peak_window_.front().first <= base) peak_window_.pop_front();
  if (peak_window_.empty()) return 0;
  const auto [then, peak_live] = peak_window_.front();
  const std::uint64_t live_then = named_history_[base - first].live_bytes;
  const std::uint64_t live_now = range_bytes_ - dead_bytes_;
  if (peak_live <= live_then) return 0;
  // At the peak the limit leaves room for this much of what is live; the rest is off the GPU then.
  const std::uint64_t live_at_peak = live_now + (peak_live - live_then);
  if (live_at_peak <= limit_) return 0;
  const std::uint64_t off_then = live_at_peak - limit_;
  const std::uint64_t resident_live = resident_bytes_ - std::min(resident_bytes_, resident_dead_bytes_);
  const std::uint64_t off_now = live_now - std::min(live_now, resident_live);
  peak_at = then + period;
  return off_then > off_now ? off_then - off_now : 0;
}

void LaunchOrderedResidency::evict_for_peak(std::uint64_t now, std::uint64_t stream,
                                            LaunchEviction& decision) {
  if (!options_.room_for_peaks || !options_.swap || !options_.restore_ahead ||
      pending_.size() >= std::max(options_.evictions_ahead, 1U) || now < peak_retry_at_)
    return;
  std::uint64_t peak_at = 0;
  const std::uint64_t short_by = room_short_at_peak(now, peak_at);
  // Smaller than a quarter batch: the waited evictions near the peak take it.
  if (short_by < batch_ / 4) return;
  choose_victims(std::min(batch_, short_by), now, stream, decision, 0, peak_at, /*live_only=*/true);
  if (decision.evict.empty() && decision.swap_out.empty()) {
    // A short loop's phases may be shorter than the pause: at most a sixteenth of it.
    peak_retry_at_ = now + std::min(kPeakRetryOperations, planning_period() / 16);
    return;
  }
  const std::uint64_t bytes = total_bytes(decision.evict) + total_bytes(decision.swap_out);
  pending_.push_back({decision.eviction_number, bytes});
  pending_bytes_ += bytes;
  ++stats_.peak_evictions;
  stats_.peak_evicted_bytes += bytes;
}

bool LaunchOrderedResidency::pending(std::uint64_t number) const {
  return std::any_of(pending_.begin(), pending_.end(),
                     [number](const PendingEviction& eviction) { return eviction.number == number; });
}

void LaunchOrderedResidency::eviction_failed(const LaunchEviction& decision) {
  const auto restore = [this, &decision](const std::vector<AddressRange>& victims, bool moved) {
    std::uint64_t restored = 0;
    for_each_part(victims, [&](Range& range, std::size_t index) {
      Block& block = range.blocks[index];
      if (block.resident) return;
      // Named and moved out again by a later decision since (the eviction thread tells of a
      // refusal late): where it is, is that decision's to say. (A refusal whose move was reaped
      // already comes without its number.)
      if (moved &&
          (block.swapped || (decision.eviction_number != 0 && block.evicted_by != decision.eviction_number)))
        return;
      make_resident(range, index);
      // Still resident: make_evicted forgot its other streams (any: several, or a table's kernels).
      block.other_streams = block.unfollowed == Block::Unfollowed::any;
      restored += part(range, index).bytes;
    });
    return restored;
  };
  const std::uint64_t evicted = restore(decision.evict, true);
  const std::uint64_t discarded = restore(decision.discard, false);
  // Not copied out: what the GPU holds is still theirs.
  unmark_swapped(decision.swap_out);
  const std::uint64_t swapped = restore(decision.swap_out, true);
  if (!decision.wait_for_evict) {
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {
      if (it->number != decision.eviction_number) continue;
      pending_bytes_ -= it->bytes;
      pending_.erase(it);
      break;
    }
  }
  stats_.evicted_bytes -= std::min(stats_.evicted_bytes, evicted + discarded + swapped);
  stats_.discarded_bytes -= std::min(stats_.discarded_bytes, discarded);
  if (evicted + discarded + swapped != 0 && stats_.evictions != 0) --stats_.evictions;
  if (decision.wait_for_evict && stats_.waited_evictions != 0) --stats_.waited_evictions;
}

}  // namespace deepum::core
