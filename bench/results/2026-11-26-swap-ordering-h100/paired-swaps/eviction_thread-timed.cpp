#include "deepum/cuda/eviction_thread.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <map>
#include <string>
#include <future>
#include <span>

#include "deepum/core/log.hpp"
#include "deepum/cuda/driver_functions.hpp"
#include "deepum/cuda/driver_hint_executor.hpp"
#include "deepum/cuda/move_ranges.hpp"

namespace deepum::cuda {
using namespace driver;

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
  create_restore_stream();
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
  // Recorded after each piece out on stream_, so of this context.
  if (r == CUDA_SUCCESS && event_create.get()(&piece_, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS) piece_ = nullptr;
  ctx_set_current.get()(program_context_);
  if (r != CUDA_SUCCESS) {
    // The context stays (nothing runs in it); the thread falls back to the program's.
    stream_ = nullptr;
    moved_ = piece_ = nullptr;
    return describe("cuStreamCreate or cuEventCreate in the eviction thread's context", r);
  }
  own_context_ = context;
  return {};
}

void EvictionThread::create_restore_stream() {
  // The copies back run in the program's context, with a staging buffer of their own: from a
  // second context they ran at about half the link's rate (H100).
  if (own_context_ == nullptr && event_create.get()(&piece_, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
    piece_ = nullptr;
  if (piece_ == nullptr || !restore_staging_.allocate()) return;
  if (stream_create.get()(&restore_stream_, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS) restore_stream_ = nullptr;
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
  std::unique_lock lock(mutex_);
  issued_wake_.wait(lock, [this, number] { return issued(number); });
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
  if (!staging_.allocate())
    core::logger().warn(
        "no device memory for the swaps' copies to pass through: they take turns with the "
        "copies back");
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

void EvictionThread::swap_out(const Eviction& eviction, CUresult after_ready) {
  CUresult r = after_ready;
  if (r == CUDA_SUCCESS) r = copy_blocks(eviction.copies, /*to_store=*/true, device_, stream_, &staging_);
  if (r == CUDA_SUCCESS && !eviction.dropped.empty()) {
    BatchRanges batch(eviction.dropped);
    r = discard_batch.get() != nullptr ? discard_batch.get()(batch.pointers.data(), batch.sizes.data(),
                                                             batch.pointers.size(), 0, stream_)
                                       : CUDA_ERROR_NOT_SUPPORTED;
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

namespace {
// Consecutive runs of `copies` of at most a staging buffer's bytes each.
std::vector<std::span<const BlockCopy>> pieces_of(const std::vector<BlockCopy>& copies) {
  std::vector<std::span<const BlockCopy>> pieces;
  std::size_t first = 0;
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (i > first && bytes + copies[i].bytes > Staging::kBytes) {
      pieces.emplace_back(copies.data() + first, i - first);
      first = i;
      bytes = 0;
    }
    bytes += copies[i].bytes;
  }
  if (first < copies.size()) pieces.emplace_back(copies.data() + first, copies.size() - first);
  return pieces;
}

std::vector<core::AddressRange> blocks_of(std::span<const BlockCopy> copies) {
  std::vector<core::AddressRange> blocks;
  blocks.reserve(copies.size());
  for (const BlockCopy& copy : copies) blocks.push_back({copy.block, copy.bytes});
  return blocks;
}
}  // namespace

CUresult EvictionThread::record_relayed(CUevent event, CUevent ours, CUstream stream) {
  if (own_context_ == nullptr) return event_record.get()(event, stream);
  CUresult r = event_record.get()(ours, stream);
  ctx_set_current.get()(program_context_);  // the relay's calls, in its own context
  if (r == CUDA_SUCCESS) r = stream_wait_event.get()(relay_, ours, 0);
  if (r == CUDA_SUCCESS) r = event_record.get()(event, relay_);
  ctx_set_current.get()(own_context_);
  return r;
}

void EvictionThread::in_program_context(bool on) {
  if (own_context_ != nullptr) ctx_set_current.get()(on ? program_context_ : own_context_);
}

static std::vector<std::pair<const char*, CUevent>> g_out_ev, g_in_ev;
static CUevent g_ev(std::vector<std::pair<const char*, CUevent>>& v, const char* what, CUstream s) {
  CUevent e = nullptr; driver::event_create.get()(&e, CU_EVENT_DEFAULT); driver::event_record.get()(e, s); v.push_back({what, e}); return e;
}
static void g_report(std::vector<std::pair<const char*, CUevent>>& v, const char* name) {
  std::map<std::string, double> tot; std::map<std::string, int> n;
  for (size_t k = 1; k < v.size(); ++k) { float m = 0; driver::event_elapsed_time.get()(&m, v[k-1].second, v[k].second); tot[v[k].first] += m; n[v[k].first]++; }
  float all = 0; if (v.size() > 1) driver::event_elapsed_time.get()(&all, v.front().second, v.back().second);
  std::string line; for (auto& [k, t] : tot) { char b[96]; snprintf(b, 96, " %s %.2f/%d", k.c_str(), t, n[k]); line += b; }
  std::fprintf(stderr, "  %s span %.2f ms:%s\n", name, all, line.c_str());

  v.clear();
}

CUresult EvictionThread::restore_piece(std::span<const BlockCopy> piece, bool after_piece_out) {
  CUmemLocation gpu{};
  gpu.type = CU_MEM_LOCATION_TYPE_DEVICE;
  gpu.id = device_;
  size_t location_index = 0;
  in_program_context(true);
  CUresult r = after_piece_out ? stream_wait_event.get()(restore_stream_, piece_, 0) : CUDA_SUCCESS;
  g_ev(g_in_ev, "waited", restore_stream_);
  if (r == CUDA_SUCCESS) {
    BatchRanges batch(blocks_of(piece));
    r = discard_and_prefetch.get()(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(), &gpu,
                                   &location_index, 1, 0, restore_stream_);
  }
  g_ev(g_in_ev, "place", restore_stream_);
  if (r == CUDA_SUCCESS) r = copy_blocks(piece, /*to_store=*/false, device_, restore_stream_, &restore_staging_);
  g_ev(g_in_ev, "copyin", restore_stream_);
  in_program_context(false);
  return r;
}

void EvictionThread::swap_with_restores(const Eviction& eviction, CUresult after_ready) {
  const std::vector<std::span<const BlockCopy>> out = pieces_of(eviction.copies);
  const std::vector<std::span<const BlockCopy>> back = pieces_of(eviction.restores);
  // The copies back come after every earlier eviction on our stream (their blocks' own copies
  // out among them), then each after as many pieces out.
  CUresult r = after_ready;
  if (r == CUDA_SUCCESS) r = event_record.get()(piece_, stream_);
  CUresult r_back = r;
  std::size_t out_done = 0, back_done = 0;  // pieces enqueued whole
  for (std::size_t j = 0; j < std::max(out.size(), back.size()); ++j) {
    if (j < out.size() && r == CUDA_SUCCESS) {
      if (j == 0) g_ev(g_out_ev, "start", stream_);
      r = copy_blocks(out[j], /*to_store=*/true, device_, stream_, &staging_);
      g_ev(g_out_ev, "copyout", stream_);
      if (r == CUDA_SUCCESS) {
        BatchRanges batch(blocks_of(out[j]));
        r = discard_batch.get()(batch.pointers.data(), batch.sizes.data(), batch.pointers.size(), 0, stream_);
      }
      g_ev(g_out_ev, "drop", stream_);
      if (r == CUDA_SUCCESS) r = event_record.get()(piece_, stream_);
      if (r == CUDA_SUCCESS) out_done = j + 1;
    }
    // A piece back into the room of a piece out; past a refused piece out, into room not freed
    // (over the limit for a while, never wrong).
    if (j < back.size() && r_back == CUDA_SUCCESS) {
      r_back = restore_piece(back[j], j == 0 || j < out_done);
      if (r_back == CUDA_SUCCESS) back_done = j + 1;
    }
  }
  {
    stream_synchronize.get()(stream_);
    in_program_context(true); stream_synchronize.get()(restore_stream_);
    g_report(g_in_ev, "in"); in_program_context(false);
    g_report(g_out_ev, "out");
  }
  if (out_done == out.size() && back_done == back.size()) return;
  // What was enqueued ends first (the victims' users before it); then the host copies what was
  // not enqueued: blocks not dropped into their slots, slots into blocks not copied back. Where
  // the waits fail, the context is going away (abandon()): nothing is read.
  CUresult waited = CUDA_ERROR_NOT_SUPPORTED;
  if (after_ready == CUDA_SUCCESS && stream_synchronize.get() != nullptr) {
    waited = stream_synchronize.get()(stream_);
    in_program_context(true);
    if (waited == CUDA_SUCCESS) waited = stream_synchronize.get()(restore_stream_);
    in_program_context(false);
  } else if (event_synchronize.get() != nullptr) {
    in_program_context(true);  // the event is the program context's
    waited = event_synchronize.get()(eviction.ready);
    in_program_context(false);
  }
  if (waited != CUDA_SUCCESS || abandoned_.load(std::memory_order_acquire)) return;
  for (std::size_t j = out_done; j < out.size(); ++j) {
    for (const BlockCopy& copy : out[j])
      std::memcpy(copy.slot, reinterpret_cast<const void*>(static_cast<std::uintptr_t>(copy.block)), copy.bytes);
  }
  for (std::size_t j = back_done; j < back.size(); ++j) {
    for (const BlockCopy& copy : back[j])
      std::memcpy(reinterpret_cast<void*>(static_cast<std::uintptr_t>(copy.block)), copy.slot, copy.bytes);
  }
  if (failures_.fetch_add(1, std::memory_order_relaxed) == 0)
    core::logger().warn("a swap on deepum's eviction thread was refused ({}); the host copied it instead",
                        describe("", r != CUDA_SUCCESS ? r : r_back));
}

bool EvictionThread::issue(const Eviction& eviction) {
  const MoveRange shown(MoveRangeKind::eviction_thread);  // in Nsight Systems
  const auto started = std::chrono::steady_clock::now();
  CUmemLocation host{};
  host.type = CU_MEM_LOCATION_TYPE_HOST;
  CUresult r = stream_wait_event.get()(stream_, eviction.ready, 0);
  if (!eviction.restores.empty() && restore_stream_ != nullptr) {
    swap_with_restores(eviction, r);
  } else if (!eviction.copies.empty()) {
    swap_out(eviction, r);
  }
  // One call per range: each stays within one allocation. On an idle stream each holds this
  // thread for its whole move.
  for (const core::AddressRange& range : eviction.to_host) {
    if (r != CUDA_SUCCESS) break;
    r = prefetch_async.get()(static_cast<CUdeviceptr>(range.address), range.bytes, host, 0, stream_);
  }
  // Recorded whatever happened: what waits for it must not wait on an event never recorded (that
  // counts as complete at once, before any move enqueued before a failure has run).
  CUresult recorded = record_relayed(eviction.done, moved_, stream_);
  if (recorded != CUDA_SUCCESS && stream_synchronize.get() != nullptr) stream_synchronize.get()(stream_);
  if (eviction.restored != nullptr && restore_stream_ != nullptr) {
    in_program_context(true);
    if (event_record.get()(eviction.restored, restore_stream_) != CUDA_SUCCESS && stream_synchronize.get() != nullptr)
      stream_synchronize.get()(restore_stream_);
    in_program_context(false);
  }
  held_ns_.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                    std::chrono::steady_clock::now() - started)
                                                    .count()),
                     std::memory_order_relaxed);
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
