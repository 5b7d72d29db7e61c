#include "deepum/core/live_buffers.hpp"

namespace deepum::core {

void LiveBuffers::handed_out(std::uint64_t address, std::uint64_t bytes) {
  std::lock_guard lock(mutex_);
  buffers_[address] = bytes;
  by_start_[address] = bytes;
}

void LiveBuffers::returned(std::uint64_t address) {
  std::lock_guard lock(mutex_);
  buffers_.erase(address);
  by_start_.erase(address);
}

std::uint64_t LiveBuffers::bytes_from(std::uint64_t pointer) const noexcept {
  std::lock_guard lock(mutex_);
  if (auto start = by_start_.find(pointer); start != by_start_.end()) return start->second;
  auto it = buffers_.upper_bound(pointer);
  if (it == buffers_.begin()) return 0;
  --it;
  const std::uint64_t end = it->first + it->second;
  return pointer < end ? end - pointer : 0;
}

std::size_t LiveBuffers::size() const {
  std::lock_guard lock(mutex_);
  return buffers_.size();
}

}  // namespace deepum::core
