// PointerExtents: how far a kernel's pointer argument reaches. A launch names only where each
// buffer starts; deepum takes the buffer to run up to the next start any launch has passed within
// the same managed range, or to the range's end. Tensors of one allocator segment lie back to back,
// so after one iteration of a training loop the extents approach the tensors' sizes; without them,
// a prefetcher that sees no page faults (remote_access) would learn only each buffer's first block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>

#include "deepum/core/events.hpp"
#include "deepum/core/residency_map.hpp"

namespace deepum::prefetch {

class PointerExtents {
 public:
  // Starts kept at most; past it they are forgotten (extents reach range ends until relearned).
  static constexpr std::size_t kMaxStarts = std::size_t{1} << 20;
  // What one start costs in the set (a red-black tree node with its key), for memory accounting.
  static constexpr std::size_t kBytesPerStart = 48;

  void on_range(const core::RangeEvent& event);
  // A launch passed this pointer: it starts a buffer.
  void note(std::uint64_t pointer);
  // [pointer, end of its buffer). A pointer outside every known range reaches one byte.
  core::AddressRange extent(std::uint64_t pointer) const;
  std::size_t starts() const { return starts_.size(); }

 private:
  std::map<std::uint64_t, std::uint64_t> ranges_;  // base -> end
  std::set<std::uint64_t> starts_;
};

}  // namespace deepum::prefetch
