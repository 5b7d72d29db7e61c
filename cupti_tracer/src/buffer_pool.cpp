#include "deepum/cupti_tracer/buffer_pool.hpp"

#include <algorithm>
#include <new>

namespace deepum::cupti_tracer {

BufferPool::BufferPool(std::size_t buffer_bytes, std::size_t max_buffers)
    : buffer_bytes_((std::max<std::size_t>(buffer_bytes, kAlignment) + kAlignment - 1) / kAlignment *
                    kAlignment),
      max_buffers_(max_buffers) {
  free_.reserve(max_buffers_);
}

BufferPool::~BufferPool() {
  for (std::uint8_t* buffer : free_) ::operator delete (buffer, std::align_val_t{kAlignment});
}

std::uint8_t* BufferPool::acquire() noexcept {
  {
    std::lock_guard lock(mutex_);
    if (!free_.empty()) {
      std::uint8_t* buffer = free_.back();
      free_.pop_back();
      in_use_.fetch_add(1, std::memory_order_relaxed);
      return buffer;
    }
    if (allocated_.load(std::memory_order_relaxed) >= max_buffers_) {
      refused_.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    allocated_.fetch_add(1, std::memory_order_relaxed);  // reserve the slot before allocating
  }
  void* memory = ::operator new (buffer_bytes_, std::align_val_t{kAlignment}, std::nothrow);
  if (memory == nullptr) {
    allocated_.fetch_sub(1, std::memory_order_relaxed);
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  in_use_.fetch_add(1, std::memory_order_relaxed);
  return static_cast<std::uint8_t*>(memory);
}

void BufferPool::release(std::uint8_t* buffer) noexcept {
  if (buffer == nullptr) return;
  std::lock_guard lock(mutex_);
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  free_.push_back(buffer);  // never reallocates: at most max_buffers_ exist
}

}  // namespace deepum::cupti_tracer
