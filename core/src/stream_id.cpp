#include "deepum/core/stream_id.hpp"

#include <atomic>

namespace deepum::core {
namespace {
std::atomic<std::uint64_t> g_next_thread_tag{1};
thread_local std::uint64_t t_per_thread_stream = 0;
}  // namespace

std::uint64_t stream_id(std::uint64_t handle) noexcept {
  if (handle != kPerThreadStreamHandle) return handle;
  if (t_per_thread_stream == 0)
    t_per_thread_stream =
        (g_next_thread_tag.fetch_add(1, std::memory_order_relaxed) << 8) | kPerThreadStreamHandle;
  return t_per_thread_stream;
}

}  // namespace deepum::core
