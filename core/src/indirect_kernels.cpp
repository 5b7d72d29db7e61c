#include "deepum/core/indirect_kernels.hpp"

#include <limits>

namespace deepum::core {

namespace {
// The calling thread's nesting of interposed NCCL calls. Here rather than a static member: read
// from another unit through the header, it tripped GCC 12's UBSan null check.
thread_local int t_collective_depth = 0;
}  // namespace

CollectiveCallScope::CollectiveCallScope() { ++t_collective_depth; }
CollectiveCallScope::~CollectiveCallScope() { --t_collective_depth; }
bool CollectiveCallScope::active() { return t_collective_depth > 0; }

bool reaches_buffers_indirectly(std::string_view kernel_name) {
  // NCCL 2.19 on: ncclDevKernel_<collective>_...; earlier: ncclKernel_... (C++ names, so mangled).
  return kernel_name.find("ncclDevKernel") != std::string_view::npos ||
         kernel_name.find("ncclKernel") != std::string_view::npos;
}

std::uint64_t nccl_element_bytes(int datatype) {
  // int8, uint8, int32, uint32, int64, uint64, float16, float32, float64, bfloat16, two float8s.
  static constexpr std::array<std::uint64_t, 12> kBytes{1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  return datatype >= 0 && static_cast<std::size_t>(datatype) < kBytes.size()
             ? kBytes[static_cast<std::size_t>(datatype)]
             : 0;
}

namespace {

// a * b, or 0 where it passes 64 bits.
std::uint64_t times(std::uint64_t a, std::uint64_t b) {
  return b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b ? 0 : a * b;
}

}  // namespace

CollectiveBuffers collective_buffers(Collective call, std::uint64_t send, std::uint64_t recv,
                                     std::uint64_t count, int datatype, int ranks) {
  CollectiveBuffers result;
  const std::uint64_t element = nccl_element_bytes(datatype);
  const std::uint64_t one = times(count, element);
  const std::uint64_t all = ranks > 0 ? times(one, static_cast<std::uint64_t>(ranks)) : 0;
  std::uint64_t send_bytes = one, recv_bytes = one;
  switch (call) {
    case Collective::all_reduce:
    case Collective::broadcast:
    case Collective::reduce:
      break;
    case Collective::all_gather:
    case Collective::gather:
      recv_bytes = all;
      break;
    case Collective::reduce_scatter:
    case Collective::scatter:
      send_bytes = all;
      break;
    case Collective::all_to_all:
      send_bytes = recv_bytes = all;
      break;
    case Collective::send:
      recv = 0;
      break;
    case Collective::recv:
      send = 0;
      break;
  }
  if (count == 0) return {{}, 0, true};  // nothing moves
  if (element == 0 || (send != 0 && send_bytes == 0) || (recv != 0 && recv_bytes == 0)) return result;
  if (send != 0) result.buffers[result.count++] = {send, send_bytes};
  if (recv != 0 && !(recv == send && recv_bytes == send_bytes))
    result.buffers[result.count++] = {recv, recv_bytes};
  result.known = true;
  return result;
}

}  // namespace deepum::core
