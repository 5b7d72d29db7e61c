#include "deepum/core/launch_queue.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <exception>
#include <new>
#include <type_traits>

namespace deepum::core {
namespace {

// Slots are written over with no destructor run and read as they were written.
static_assert(std::is_trivially_copyable_v<KernelLaunch> && std::is_trivially_destructible_v<KernelLaunch>);

std::atomic<std::uint64_t> g_next_queue_id{1};

constexpr std::size_t kRingBytes = LaunchRing::kCapacity * sizeof(KernelLaunch);

KernelLaunch* map_slots() {
  void* memory = mmap(nullptr, kRingBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return memory == MAP_FAILED ? nullptr : static_cast<KernelLaunch*>(memory);
}

// A thread's ring, for the queue that made it. Plain data, so that it can still be read while the
// thread's thread_local objects are being destroyed.
struct ThreadRing {
  LaunchRing* ring = nullptr;
  std::uint64_t owner = 0;  // the queue's id
  bool exited = false;      // the thread's ring holder is gone: it is exiting
};
thread_local ThreadRing t_ring;

// Owns the thread's share of its ring, and retires the ring when the thread exits. Shared with
// the queue, so that whichever of the two goes last frees it.
struct RingHolder {
  std::shared_ptr<LaunchRing> ring;

  void replace(std::shared_ptr<LaunchRing> next) {
    if (ring) ring->retire();
    ring = std::move(next);
  }
  ~RingHolder() {
    replace(nullptr);
    t_ring = ThreadRing{nullptr, 0, true};
  }
};
thread_local RingHolder t_holder;

}  // namespace

LaunchRing::LaunchRing() : slots_(map_slots()) {}

LaunchRing::~LaunchRing() {
  if (slots_ != nullptr) munmap(slots_, kRingBytes);
}

bool LaunchRing::push(const KernelLaunch& launch) {
  if (slots_ == nullptr) return false;
  const std::uint64_t head = head_.load(std::memory_order_relaxed);
  if (head - tail_.load(std::memory_order_acquire) >= kCapacity) return false;
  new (&slots_[head & (kCapacity - 1)]) KernelLaunch(launch);
  head_.store(head + 1, std::memory_order_release);
  return true;
}

LaunchQueue::LaunchQueue() : id_(g_next_queue_id.fetch_add(1, std::memory_order_relaxed)) {}

LaunchQueue::~LaunchQueue() = default;

std::shared_ptr<LaunchRing> LaunchQueue::register_ring() {
  auto ring = std::make_shared<LaunchRing>();
  std::lock_guard lock(rings_mutex_);
  rings_.push_back(ring);
  return ring;
}

void LaunchQueue::push(const KernelLaunch& launch) noexcept {
  try {
    if (t_ring.exited) return push_after_thread_exit(launch);
    if (t_ring.ring == nullptr || t_ring.owner != id_) {
      // First launch of this thread into this queue (one queue per process in practice; a thread's
      // ring of another queue is retired, and freed once that queue has drained it).
      t_holder.replace(register_ring());
      t_ring = ThreadRing{t_holder.ring.get(), id_, false};
    }
    if (t_ring.ring->push(launch)) return;
  } catch (const std::exception&) {
    // No memory for a ring (or a lock failed): the launch is dropped, not the program.
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
}

// A launch from a thread_local destructor that runs after the thread's ring holder is gone, or
// from an exit handler after the main thread's: one ring shared by all such launches, its
// producers taken one at a time (rare, so a lock is no cost).
void LaunchQueue::push_after_thread_exit(const KernelLaunch& launch) {
  std::lock_guard lock(late_mutex_);
  if (late_ring_ == nullptr) late_ring_ = register_ring().get();  // held by rings_, never retired
  if (!late_ring_->push(launch)) dropped_.fetch_add(1, std::memory_order_relaxed);
}

void LaunchQueue::free_finished_rings() {
  // Declared before the lock, so destroyed after it is released: unmapping takes the kernel's lock.
  std::vector<std::shared_ptr<LaunchRing>> freed;
  std::lock_guard lock(rings_mutex_);
  for (auto& ring : rings_) {
    if (std::find(finished_.begin(), finished_.end(), ring.get()) != finished_.end()) {
      freed.push_back(std::move(ring));
    }
  }
  std::erase(rings_, nullptr);
}

std::size_t LaunchQueue::producer_threads() const {
  std::lock_guard lock(rings_mutex_);
  return rings_.size();
}

}  // namespace deepum::core
