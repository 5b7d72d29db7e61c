// Stream ids: how events and the model tell streams apart. A stream's id is its handle, except for
// the per-thread default stream: its handle (CU_STREAM_PER_THREAD) is one value in every thread,
// though each thread's is a stream of its own, and an event one thread records there orders
// nothing of another's. Each thread's gets an id of its own.
#pragma once

#include <cstdint>

namespace deepum::core {

// CU_STREAM_PER_THREAD: cuda.h defines it as ((CUstream)0x2); CU_STREAM_LEGACY as 0x1 (the legacy
// stream, as the null handle names it).
inline constexpr std::uint64_t kPerThreadStreamHandle = 0x2;
inline constexpr std::uint64_t kLegacyStreamHandle = 0x1;

// The id of the stream `handle` names in the calling thread.
std::uint64_t stream_id(std::uint64_t handle) noexcept;
// The handle to pass the driver for stream `id`, in the thread that the id came from.
constexpr std::uint64_t stream_handle(std::uint64_t id) noexcept {
  // Real handles are aligned pointers: no other id ends in this byte.
  return (id & 0xff) == kPerThreadStreamHandle ? kPerThreadStreamHandle : id;
}

}  // namespace deepum::core
