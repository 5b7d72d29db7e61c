#include "deepum/core/launch_queue.hpp"

namespace deepum::core {
namespace {
std::atomic<std::uint64_t> g_next_queue_id{1};
}  // namespace

LaunchQueue::LaunchQueue() : id_(g_next_queue_id.fetch_add(1, std::memory_order_relaxed)) {}

LaunchQueue::Ring& LaunchQueue::ring_for_this_thread() {
  // One queue per process in practice; a thread's cached ring belongs to the queue that made it.
  thread_local Ring* ring = nullptr;
  thread_local std::uint64_t owner = 0;
  if (ring == nullptr || owner != id_) {
    auto created = std::make_unique<Ring>();
    ring = created.get();
    owner = id_;
    std::lock_guard lock(rings_mutex_);
    rings_.push_back(std::move(created));
  }
  return *ring;
}

void LaunchQueue::push(const KernelLaunch& launch) {
  Ring& ring = ring_for_this_thread();
  const std::uint64_t head = ring.head.load(std::memory_order_relaxed);
  if (head - ring.tail.load(std::memory_order_acquire) >= kRingCapacity) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ring.slots[head % kRingCapacity] = launch;
  ring.head.store(head + 1, std::memory_order_release);
}

std::size_t LaunchQueue::producer_threads() const {
  std::lock_guard lock(rings_mutex_);
  return rings_.size();
}

}  // namespace deepum::core
