// PointerExtents: a pointer argument reaches to the next buffer start launches have shown, within
// its managed range.
#include <doctest/doctest.h>

#include "deepum/prefetch/pointer_extents.hpp"

using deepum::core::RangeEvent;
using deepum::prefetch::PointerExtents;

namespace {
constexpr std::uint64_t kMiB = 1ull << 20;
constexpr std::uint64_t kBase = 0x7f0000000000;
}  // namespace

TEST_CASE("a buffer reaches the next start seen in its range, or the range's end") {
  PointerExtents extents;
  extents.on_range({RangeEvent::Kind::allocated, 0, kBase, 64 * kMiB});
  extents.note(kBase);
  // Nothing else seen yet: the first buffer may be the whole range.
  CHECK(extents.extent(kBase).bytes == 64 * kMiB);
  extents.note(kBase + 24 * kMiB);
  extents.note(kBase + 10 * kMiB);
  CHECK(extents.extent(kBase).bytes == 10 * kMiB);
  CHECK(extents.extent(kBase + 10 * kMiB).bytes == 14 * kMiB);
  CHECK(extents.extent(kBase + 24 * kMiB).bytes == 40 * kMiB);
  // A pointer into a buffer (a view) reaches the same end.
  CHECK(extents.extent(kBase + 12 * kMiB).address == kBase + 12 * kMiB);
  CHECK(extents.extent(kBase + 12 * kMiB).bytes == 12 * kMiB);
  CHECK(extents.starts() == 3);
}

TEST_CASE("starts in another range do not bound a buffer; unknown memory reaches one byte") {
  PointerExtents extents;
  extents.on_range({RangeEvent::Kind::allocated, 0, kBase, 8 * kMiB});
  extents.on_range({RangeEvent::Kind::allocated, 0, kBase + 8 * kMiB, 8 * kMiB});
  extents.note(kBase + 4 * kMiB);
  extents.note(kBase + 12 * kMiB);
  CHECK(extents.extent(kBase + 4 * kMiB).bytes == 4 * kMiB);  // its range ends before the next start
  CHECK(extents.extent(kBase + 12 * kMiB).bytes == 4 * kMiB);
  CHECK(extents.extent(kBase + 16 * kMiB).bytes == 1);  // past both ranges
  CHECK(extents.extent(kBase - 1).bytes == 1);          // before them
}

TEST_CASE("freeing a range forgets its starts; a new range at the same address starts afresh") {
  PointerExtents extents;
  extents.on_range({RangeEvent::Kind::allocated, 0, kBase, 32 * kMiB});
  extents.note(kBase);
  extents.note(kBase + 2 * kMiB);
  extents.on_range({RangeEvent::Kind::freed, 0, kBase, 32 * kMiB});
  CHECK(extents.starts() == 0);
  CHECK(extents.extent(kBase).bytes == 1);
  extents.on_range({RangeEvent::Kind::allocated, 0, kBase, 16 * kMiB});
  extents.note(kBase);
  CHECK(extents.extent(kBase).bytes == 16 * kMiB);
}
