// Kernels that reach their buffers through structures of their own library rather than through
// their parameters, so that deepum cannot see what they read or write: NCCL's collectives (the
// buffers are arguments of ncclAllReduce and the like, which NCCL keeps in device memory for its
// kernels). A swapped or freshly placed block such a kernel uses would be read dropped, or its
// write lost, unless the call that hands NCCL the buffers is seen: deepum interposes NCCL's
// collective and point-to-point calls, names their buffers before the call (as a launch's), and
// lets the kernels launched inside the call through. Swaps and placement of fresh blocks still stop
// at the first call (cuda/src/tracing_session.cpp says why).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "deepum/core/residency_map.hpp"

namespace deepum::core {

// Whether the kernel of this (mangled or plain) name is one of those.
bool reaches_buffers_indirectly(std::string_view kernel_name);

// NCCL's calls that hand it buffers (nccl.h, 2.32), each with its *Config twin where it has one.
enum class Collective : std::uint8_t {
  all_reduce,      // send, recv: count
  broadcast,       // send (root's), recv: count
  reduce,          // send: count; recv (root's): count
  all_gather,      // send: count; recv: count x ranks
  reduce_scatter,  // send: count x ranks; recv: count
  all_to_all,      // send, recv: count x ranks
  gather,          // send: count; recv (root's): count x ranks
  scatter,         // send (root's): count x ranks; recv: count
  send,            // send: count
  recv,            // recv: count
};

// Bytes of one element of NCCL's ncclDataType_t `datatype`; 0 for a type this version of deepum
// does not know.
std::uint64_t nccl_element_bytes(int datatype);

// The memory a call reads or writes: up to two buffers (the send and the receive buffer, which
// may be the same). `known` false: the extent cannot be told (an unknown type, an unknown number
// of ranks, or a size past 64 bits), and the call must count as reaching memory it does not name.
// A root-only buffer is named on every rank: a superset is safe, naming an unused buffer only
// moves it.
struct CollectiveBuffers {
  std::array<AddressRange, 2> buffers{};
  std::size_t count = 0;
  bool known = false;
};
// `ranks` is the communicator's size (0: unknown).
CollectiveBuffers collective_buffers(Collective call, std::uint64_t send, std::uint64_t recv,
                                     std::uint64_t count, int datatype, int ranks);

// Marks the calling thread as inside an interposed NCCL call (a collective, or the group end that
// launches a group's kernels), whose kernels reach only buffers named before the call.
class CollectiveCallScope {
 public:
  CollectiveCallScope();
  ~CollectiveCallScope();
  CollectiveCallScope(const CollectiveCallScope&) = delete;
  CollectiveCallScope& operator=(const CollectiveCallScope&) = delete;
  static bool active();
};

}  // namespace deepum::core
