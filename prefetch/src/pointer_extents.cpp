#include "deepum/prefetch/pointer_extents.hpp"

#include <algorithm>

namespace deepum::prefetch {

void PointerExtents::on_range(const core::RangeEvent& event) {
  const std::uint64_t end = event.address + event.bytes;
  if (event.kind == core::RangeEvent::Kind::allocated) {
    ranges_[event.address] = end;
    return;
  }
  ranges_.erase(event.address);
  // The range's buffers are gone with it; a later range at these addresses has its own.
  starts_.erase(starts_.lower_bound(event.address), starts_.lower_bound(end));
}

void PointerExtents::note(std::uint64_t pointer) {
  if (starts_.size() >= kMaxStarts && starts_.count(pointer) == 0) starts_.clear();
  starts_.insert(pointer);
}

core::AddressRange PointerExtents::extent(std::uint64_t pointer) const {
  auto range = ranges_.upper_bound(pointer);
  if (range == ranges_.begin()) return {pointer, 1};
  --range;
  if (pointer >= range->second) return {pointer, 1};
  std::uint64_t end = range->second;
  if (auto next = starts_.upper_bound(pointer); next != starts_.end()) end = std::min(end, *next);
  return {pointer, end - pointer};
}

}  // namespace deepum::prefetch
