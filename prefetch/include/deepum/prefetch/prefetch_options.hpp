// PrefetchOptions: the shapes of DeepUM's tables and the planner's horizon. The defaults are the
// paper's (history of 3 kernels; 2048 rows, 2 ways, 4 successors per block table; lookahead of 32
// kernels, the best of 8..256 it tried).
#pragma once

#include <cstddef>
#include <cstdint>

namespace deepum::prefetch {

struct PrefetchOptions {
  std::size_t history_length = 3;  // execution IDs that key the next-kernel prediction (1..8)
  std::size_t rows = 2048;         // sets per block correlation table
  std::size_t ways = 2;            // rows per set
  std::size_t successors = 4;      // successor blocks kept per row, most recently seen first
  std::size_t lookahead = 32;      // kernels planned ahead, adapted between the two bounds below
  std::size_t max_lookahead = 256;
  std::size_t min_lookahead = 8;
  // GPU memory the plans leave free below the resident limit, for demand faults and new allocations.
  std::uint64_t headroom_bytes = 256ull << 20;
  // Whether a pointer argument stands for its whole buffer (PointerExtents, or the size the
  // program's allocator gave it) rather than its first block. For when the GPU raises no faults to
  // learn from (remote_access): on GPT-2 with faults, whole buffers overstate what kernels touch,
  // and the plans then evict and fetch back several times what reactive eviction moves.
  bool pointer_extents = false;
  // Bounds on the learned state. Past either, everything is forgotten and learning starts over:
  // execution keys that never repeat (addresses that change every iteration) would otherwise grow
  // the tables without end. Measured with the defaults (libstdc++, 64-bit): an execution ID with its
  // history entry ~150 B; a block table ~160 B empty, ~250 B per block learned (sets are allocated
  // on first use), ~340 KiB with all 2048 sets in use. A loop of 10,000 kernels touching 10 blocks
  // each: ~27 MB.
  std::size_t max_execution_ids = 65536;
  std::uint64_t max_table_bytes = 512ull << 20;
};

}  // namespace deepum::prefetch
