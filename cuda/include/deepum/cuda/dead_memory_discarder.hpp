// DeadMemoryDiscarder: memory the program can no longer read is dropped, never written back.
// When PyTorch's caching allocator takes a block back into its cache (its trace tracker says
// so), the block's whole 2 MB blocks are discarded and placed on the host in one call: nothing
// moves, so evicting them later costs nothing, and the GPU's next touch after reuse arrives as a
// reported migration that deepum counts.
//
// Ordering is what makes this safe. The allocator reuses a cached block only on the stream it
// belongs to (or after the events of record_stream), so the discard runs after all the program's
// work queued on that stream so far, and everything queued there later waits for the discard. The
// discard itself runs on a stream of deepum's own (the driver refuses the legacy stream). Blocks of
// a stream being captured into a graph are left alone.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "deepum/core/residency_map.hpp"

namespace deepum::cuda {

class DeadMemoryDiscarder {
 public:
  // Creates the stream and events in the current context. Empty on success, else what failed.
  std::string create();

  // Program thread, PyTorch's allocator lock held: the block [address, address + bytes) went back
  // to the cache of `stream`. Returns the ranges discarded (whole 2 MB blocks only; empty when the
  // block holds none, or when it was skipped).
  std::vector<core::AddressRange> discard_returned_block(CUstream stream, std::uint64_t address,
                                                         std::uint64_t bytes) noexcept;

  std::uint64_t discarded_bytes() const { return discarded_bytes_.load(std::memory_order_relaxed); }
  std::uint64_t skipped_capturing() const { return skipped_capturing_.load(std::memory_order_relaxed); }
  std::uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  CUstream stream_ = nullptr;
  CUevent program_done_ = nullptr;  // recorded on the program's stream, waited for by ours
  CUevent discard_done_ = nullptr;  // recorded on ours, waited for by the program's stream
  std::atomic<std::uint64_t> discarded_bytes_{0}, skipped_capturing_{0}, failures_{0};
};

}  // namespace deepum::cuda
