// BufferPool: the activity buffers handed to CUPTI. CUPTI asks for a buffer whenever one fills (on
// the thread producing records) and hands it back full; recycling them avoids malloc churn and caps
// the memory held.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace deepum::cupti_tracer {

class BufferPool {
 public:
  // CUPTI needs 8-byte aligned buffers; these are 64-byte aligned.
  static constexpr std::size_t kAlignment = 64;

  // buffer_bytes is rounded up to a multiple of kAlignment. At most max_buffers exist at once;
  // past that, acquire() returns nullptr and CUPTI drops records (counted as dropped).
  BufferPool(std::size_t buffer_bytes, std::size_t max_buffers);
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();  // frees the free buffers; buffers still out are leaked (CUPTI may hold them)

  std::uint8_t* acquire() noexcept;
  void release(std::uint8_t* buffer) noexcept;

  std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  std::size_t allocated() const noexcept { return allocated_.load(std::memory_order_relaxed); }
  std::size_t in_use() const noexcept { return in_use_.load(std::memory_order_relaxed); }
  std::size_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  const std::size_t buffer_bytes_;
  const std::size_t max_buffers_;
  std::mutex mutex_;
  std::vector<std::uint8_t*> free_;  // capacity max_buffers_, reserved up front
  std::atomic<std::size_t> allocated_{0};
  std::atomic<std::size_t> in_use_{0};
  std::atomic<std::size_t> refused_{0};
};

}  // namespace deepum::cupti_tracer
