// HostSwapStore: pinned host memory of deepum's own that holds the contents of swapped 2 MB blocks
// (stream_ordered_swap). A copy between the GPU and pinned memory runs at the link's speed (55 GB/s
// each way on the H200 machine), where the driver's move of managed memory to the host maps every
// 4 KiB host page and ran at 8-16 GB/s on the H100.
//
// One slot per block, in chunks pinned ahead of need by deepum's worker and kept to the end
// (pinning costs far more than a copy, and takes the driver's time: never under the engine's
// lock); a slot freed is reused by the next block. Ahead of need: the store grows towards the most
// the program's live memory has exceeded the resident limit by (plus a reserve) as soon as it
// does, so that swaps find slots instead of falling back to the driver's eviction; pinning
// alongside the program, it keeps up only so far. Not thread-safe: the evictor's lock guards it,
// except pin_chunk, which touches nothing of the store.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace deepum::cuda {

class HostSwapStore {
 public:
  static constexpr std::uint64_t kSlotBytes = std::uint64_t{1} << 21;    // core::kBlockBytes
  static constexpr std::uint64_t kChunkBytes = std::uint64_t{64} << 20;  // pinned at once, at least
  // Pinned at once where the store is that far behind: a registration waits for the managed-memory
  // move in flight (about 95 ms beside 1 GiB moves, whatever its size), so fewer, larger ones.
  static constexpr std::uint64_t kLargeChunkBytes = std::uint64_t{256} << 20;

  explicit HostSwapStore(std::uint64_t limit_bytes) : limit_(limit_bytes) {}
  ~HostSwapStore();
  HostSwapStore(const HostSwapStore&) = delete;
  HostSwapStore& operator=(const HostSwapStore&) = delete;

  // The slot holding the block at `block_address`, taken now from the slots pinned already;
  // nullptr: none is free (see full()).
  void* take(std::uint64_t block_address);
  // The slot of a block taken before; nullptr: none.
  void* find(std::uint64_t block_address) const;
  // The block no longer owns its slot, which is returned: free it with give_back once nothing
  // copies into or out of it any more. nullptr: the block had none.
  void* detach(std::uint64_t block_address);
  void give_back(void* slot) { free_.push_back(slot); }

  // Pinned host memory: of deepum's own mapping and registered with the driver, or (where
  // registering is refused) the driver's own.
  struct Chunk {
    void* pointer = nullptr;
    std::uint64_t bytes = 0;
    bool registered = false;
  };
  // Growth, in three steps so that pinning runs with no lock held: the bytes of the next chunk to
  // pin (0: none; under the limit, no failure yet, and fewer than `reserve_bytes` free or fewer
  // pinned than `away_bytes`, what has had to live off the GPU, plus that reserve), pin_chunk with
  // no lock, then add_chunk (or pin_failed, and unpin what was pinned).
  std::uint64_t next_chunk_bytes(std::uint64_t reserve_bytes, std::uint64_t away_bytes) const;
  static Chunk pin_chunk(std::uint64_t bytes, std::string& error);
  static void unpin(const Chunk& chunk);
  void add_chunk(const Chunk& chunk);
  void pin_failed(std::string error) { error_ = std::move(error); }
  // It will not grow any more: its limit is reached, or pinning failed.
  bool full() const { return pinned_bytes_ + kChunkBytes > limit_ || !error_.empty(); }

  std::uint64_t pinned_bytes() const { return pinned_bytes_; }
  std::uint64_t used_bytes() const { return slots_.size() * kSlotBytes; }
  std::uint64_t free_bytes() const { return free_.size() * kSlotBytes; }
  const std::string& error() const { return error_; }

 private:
  std::uint64_t limit_;
  std::uint64_t pinned_bytes_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<void*> free_;
  std::unordered_map<std::uint64_t, void*> slots_;  // block address -> slot
  std::string error_;
};

}  // namespace deepum::cuda
