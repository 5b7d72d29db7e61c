// CaptureGate: keeps deepum's own event queries, synchronizes and CUPTI flushes away from a stream
// capture. While any thread captures a stream into a CUDA graph in the global mode (PyTorch's
// torch.cuda.graph default), querying or synchronizing an event from any other thread is an error
// that invalidates the capture, so deepum must make none of those calls while a capture runs.
//
// The program's thread announces a capture before the driver begins it (begin_capture waits for
// deepum's calls in flight to end) and after it ends; deepum's threads wrap each such call in
// try_enter / leave and skip the call when a capture runs. Lock-free: the announcing thread spins
// (yielding) only while deepum finishes a call it began before the announcement.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

namespace deepum::core {

class CaptureGate {
 public:
  // A capture is about to begin: from here on no new call enters; returns once those in flight
  // have left, true when no other capture was running. Announcements nest (captures on several
  // streams).
  bool begin_capture() noexcept {
    const bool first = captures_.fetch_add(1, std::memory_order_seq_cst) == 0;
    while (inside_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    return first;
  }
  // A capture ended (or failed to begin).
  void end_capture() noexcept {
    if (captures_.load(std::memory_order_relaxed) > 0) captures_.fetch_sub(1, std::memory_order_seq_cst);
  }
  bool capturing() const noexcept { return captures_.load(std::memory_order_seq_cst) != 0; }

  // Before a query or synchronize of deepum's: false (skip the call) while a capture runs.
  bool try_enter() noexcept {
    inside_.fetch_add(1, std::memory_order_seq_cst);
    if (captures_.load(std::memory_order_seq_cst) == 0) return true;
    inside_.fetch_sub(1, std::memory_order_seq_cst);
    skipped_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  void leave() noexcept { inside_.fetch_sub(1, std::memory_order_seq_cst); }

  // Calls skipped because a capture ran.
  std::uint64_t skipped() const noexcept { return skipped_.load(std::memory_order_relaxed); }
  // In a forked child: the parent's captures and calls are not the child's.
  void reset_after_fork() noexcept {
    captures_.store(0);
    inside_.store(0);
  }

 private:
  std::atomic<std::int64_t> captures_{0};
  std::atomic<std::int64_t> inside_{0};
  std::atomic<std::uint64_t> skipped_{0};
};

// The process's one gate.
CaptureGate& capture_gate() noexcept;

// try_enter/leave as a scope: `if (GateEntry entry; entry) { ...query... }`.
class GateEntry {
 public:
  explicit GateEntry(CaptureGate& gate = capture_gate()) noexcept : gate_(gate), entered_(gate.try_enter()) {}
  ~GateEntry() {
    if (entered_) gate_.leave();
  }
  GateEntry(const GateEntry&) = delete;
  GateEntry& operator=(const GateEntry&) = delete;
  explicit operator bool() const noexcept { return entered_; }

 private:
  CaptureGate& gate_;
  bool entered_;
};

}  // namespace deepum::core
