#include "deepum/cuda/eviction_thread.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

#include "deepum/core/elapsed.hpp"
#include "deepum/core/log.hpp"
#include "deepum/cuda/driver_basics.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/move_ranges.hpp"

namespace deepum::cuda {
using namespace driver;

using core::ns_since;

std::string EvictionThread::start() {
  if (ctx_get_current.get() == nullptr || ctx_set_current.get() == nullptr || ctx_get_device.get() == nullptr)
    return "the driver lacks cuCtxGetCurrent";
  if (CUresult r = ctx_get_current.get()(&program_context_); r != CUDA_SUCCESS || program_context_ == nullptr)
    return describe("cuCtxGetCurrent", r);
  if (CUresult r = ctx_get_device.get()(&device_); r != CUDA_SUCCESS) return describe("cuCtxGetDevice", r);
  if (const std::string error = create_own_context(); !error.empty()) {
    core::logger().warn(
        "the eviction thread runs in the program's context ({}): its moves may hold up the "
        "program's launches",
        error);
    if (CUresult r = stream_create.get()(&stream_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
      stream_ = nullptr;
      return describe("cuStreamCreate", r);
    }
  }
  // The thread must never take the program's signals.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::promise<bool> bound;
  std::future<bool> bound_future = bound.get_future();
  thread_ = std::thread([this, &bound] { run(bound); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  pthread_setname_np(thread_.native_handle(), "deepum-evictions");
  // A thread without a context could issue nothing, and what it was handed would be lost.
  if (!bound_future.get()) {
    thread_.join();
    return "the eviction thread could not make its context current";
  }
  return {};
}

std::string EvictionThread::create_own_context() {
  if (ctx_create.get() == nullptr) return "the driver lacks cuCtxCreate_v4";
  if (CUresult r = stream_create.get()(&relay_, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) {
    relay_ = nullptr;
    return describe("cuStreamCreate", r);
  }
  CUcontext context = nullptr;
  // The new context becomes current in this thread: the program's is made current again below.
  if (CUresult r = ctx_create.get()(&context, nullptr, 0, device_); r != CUDA_SUCCESS)
    return describe("cuCtxCreate", r);
  CUresult r = stream_create.get()(&stream_, CU_STREAM_NON_BLOCKING);
  if (r == CUDA_SUCCESS) r = event_create.get()(&moved_, CU_EVENT_DISABLE_TIMING);
  ctx_set_current.get()(program_context_);
  if (r != CUDA_SUCCESS) {
    // The context stays (nothing runs in it); the thread falls back to the program's.
    stream_ = nullptr;
    moved_ = nullptr;
    return describe("cuStreamCreate or cuEventCreate in the eviction thread's context", r);
  }
  own_context_ = context;
  return {};
}

std::uint32_t EvictionThread::hand_over(Eviction eviction) {
  std::lock_guard lock(mutex_);
  if (stopping_) return 0;  // the thread ends or has ended: nobody would issue it
  const std::uint32_t number = ++next_number_;
  handed_.push_back({std::move(eviction), number});
  wake_.notify_one();
  return number;
}

void EvictionThread::wait_issued(std::uint32_t number) {
  if (issued(number)) return;
  const auto started = std::chrono::steady_clock::now();
  {
    std::unique_lock lock(mutex_);
    issued_wake_.wait(lock, [this, number] { return issued(number); });
  }
  waited_ns_.fetch_add(ns_since(started), std::memory_order_relaxed);
}

std::vector<EvictionThread::Failed> EvictionThread::take_failed() {
  std::lock_guard lock(mutex_);
  return std::exchange(failed_, {});
}

void EvictionThread::run(std::promise<bool>& bound) {
  const OwnMovesScope own;  // this thread's copies pass through deepum's callbacks
  if (ctx_set_current.get()(own_context_ != nullptr ? own_context_ : program_context_) != CUDA_SUCCESS) {
    bound.set_value(false);
    return;
  }
  // No copy kernel in a context of the thread's own: kernels of two contexts take turns on the
  // GPU, so each launch would stop the program's kernels.
  if (!staging_.allocate(/*with_kernel=*/own_context_ == nullptr)) {
    core::logger().warn(
        "no device memory for the swaps' copies to pass through: they take turns with the "
        "copies back");
  } else if (!create_second_lane()) {
    core::logger().debug("the swaps' copies out go through one buffer (no second stream or buffer)");
  }
  bound.set_value(true);  // `bound` is gone from here on
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !handed_.empty(); });
    if (handed_.empty()) return;  // stopping, and everything handed over is issued
    Handed handed = std::move(handed_.front());
    handed_.pop_front();
    lock.unlock();
    const bool moved = issue(handed.eviction);
    lock.lock();
    if (!moved)
      failed_.push_back({std::move(handed.eviction.to_host), handed.eviction.waited, handed.number});
    // Never back: drop_handed() may have counted later ones issued already.
    issued_.store(std::max(issued_.load(std::memory_order_relaxed), handed.number),
                  std::memory_order_release);
    issued_wake_.notify_all();
  }
}

bool EvictionThread::create_second_lane() {
  if (!second_staging_.allocate(/*with_kernel=*/own_context_ == nullptr)) return false;
  if (stream_create.get()(&second_stream_, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) {
    second_stream_ = nullptr;
    return false;
  }
  if (event_create.get()(&second_done_, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) {
    second_done_ = nullptr;
    return false;
  }
  return true;
}

SecondLane EvictionThread::second_lane(CUevent ready) {
  if (second_done_ == nullptr || stream_wait_event.get()(second_stream_, ready, 0) != CUDA_SUCCESS) return {};
  return {second_stream_, &second_staging_};
}

void EvictionThread::join_second_lane() {
  CUresult r = event_record.get()(second_done_, second_stream_);
  if (r == CUDA_SUCCESS) r = stream_wait_event.get()(stream_, second_done_, 0);
  if (r != CUDA_SUCCESS) stream_synchronize.get()(second_stream_);  // ended before what follows, then
}

void EvictionThread::swap_out(const Eviction& eviction, CUresult after_ready) {
  CUresult r = after_ready;
  const auto started = std::chrono::steady_clock::now();
  if (r == CUDA_SUCCESS) {
    const SecondLane second = second_lane(eviction.ready);
    r = copy_blocks(eviction.copies, /*to_store=*/true, device_, stream_, &staging_, second);
    // Whatever the copies did: the drop, the host's fallback and the eviction's event come after
    // both lanes.
    if (second.usable()) join_second_lane();
  }
  copy_calls_ns_.fetch_add(ns_since(started), std::memory_order_relaxed);
  const auto copied = std::chrono::steady_clock::now();
  if (r == CUDA_SUCCESS && !eviction.dropped.empty()) {
    // The copies' end waited for apart from the drop call, to time each (drop_after_copies's own
    // wait then finds the stream idle).
    stream_synchronize.get()(stream_);
    drop_copy_waits_ns_.fetch_add(ns_since(copied), std::memory_order_relaxed);
    const auto ended = std::chrono::steady_clock::now();
    r = drop_after_copies(eviction.dropped, stream_);
    drop_calls_ns_.fetch_add(ns_since(ended), std::memory_order_relaxed);
    // Issued: the store holds the contents (the copies ended first). Waited for before the
    // eviction's event, whatever this wait says.
    if (r == CUDA_SUCCESS) stream_synchronize.get()(stream_);
    drops_ns_.fetch_add(ns_since(copied), std::memory_order_relaxed);
    if (r == CUDA_SUCCESS) return;
  }
  if (r == CUDA_SUCCESS) return;
  // Whatever was enqueued ends first, and the victims' users: then the host reads each block
  // (managed memory is the host's to read) into its slot. Nothing is dropped: a copy back later
  // writes the blocks with the same contents. Where the waits fail, the context is going away
  // (abandon()) and its memory with it: nothing is read.
  CUresult waited = CUDA_ERROR_NOT_SUPPORTED;
  if (after_ready == CUDA_SUCCESS && stream_synchronize.get() != nullptr) {
    waited = stream_synchronize.get()(stream_);
  } else if (event_synchronize.get() != nullptr) {
    ctx_set_current.get()(program_context_);  // the event is the program context's
    waited = event_synchronize.get()(eviction.ready);
    if (own_context_ != nullptr) ctx_set_current.get()(own_context_);
  }
  if (waited != CUDA_SUCCESS || abandoned_.load(std::memory_order_acquire)) return;
  for (const BlockCopy& copy : eviction.copies)
    std::memcpy(copy.slot, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(copy.block)),
                copy.bytes);
  if (failures_.fetch_add(1, std::memory_order_relaxed) == 0)
    core::logger().warn("a swap on deepum's eviction thread was refused ({}); the host copied it instead",
                        describe("", r));
}

bool EvictionThread::issue(const Eviction& eviction) {
  const MoveRange shown(MoveRangeKind::eviction_thread);  // in Nsight Systems
  const auto started = std::chrono::steady_clock::now();
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  CUresult r = stream_wait_event.get()(stream_, eviction.ready, 0);
  if (!eviction.copies.empty()) swap_out(eviction, r);
  // One call per range: each stays within one allocation. On an idle stream each holds this
  // thread for its whole move.
  for (const core::AddressRange& range : eviction.to_host) {
    if (r != CUDA_SUCCESS) break;
    r = prefetch_async.get()(static_cast<CUdeviceptr>(range.address), range.bytes, host, 0, stream_);
  }
  // Recorded whatever happened: what waits for it must not wait on an event never recorded (that
  // counts as complete at once, before any move enqueued before a failure has run).
  CUresult recorded = CUDA_SUCCESS;
  if (own_context_ != nullptr) {
    recorded = event_record.get()(moved_, stream_);
    ctx_set_current.get()(program_context_);  // the relay's calls, in its own context
    if (recorded == CUDA_SUCCESS) recorded = stream_wait_event.get()(relay_, moved_, 0);
    if (recorded == CUDA_SUCCESS) recorded = event_record.get()(eviction.done, relay_);
    ctx_set_current.get()(own_context_);
  } else {
    recorded = event_record.get()(eviction.done, stream_);
  }
  if (recorded != CUDA_SUCCESS && stream_synchronize.get() != nullptr) stream_synchronize.get()(stream_);
  held_ns_.fetch_add(ns_since(started), std::memory_order_relaxed);
  // A swap alone never fails (swap_out copied it on the host where the driver refused it).
  if (r == CUDA_SUCCESS || eviction.to_host.empty()) return true;
  if (failures_.fetch_add(1, std::memory_order_relaxed) == 0)
    core::logger().warn(
        "an eviction on deepum's eviction thread failed ({}); later failures are only counted",
        describe("", r));
  return false;
}

void EvictionThread::drop_handed() {
  abandoned_.store(true, std::memory_order_release);
  handed_.clear();
  // Counted as issued, so that no one waits for them (their events mean nothing any more).
  issued_.store(next_number_, std::memory_order_release);
  issued_wake_.notify_all();
}

void EvictionThread::abandon() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    drop_handed();
  }
  wake_.notify_all();
}

void EvictionThread::stop(bool discard_pending) {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (discard_pending) drop_handed();
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace deepum::cuda
