// ValueWaits: the program's stream memory waits (cuStreamWaitValue32/64, or a cuStreamBatchMemOp
// holding one) that may still be waiting on the GPU.
//
// Such a wait may be for a value that the host or work enqueued later, in another stream, writes.
// deepum orders a move after the work of the stream whose operation decided it, and later
// operations of any stream, on any device, may wait for moves: for their room, or behind them in
// deepum's own streams and eviction thread. A move decided after such a wait would make the work
// that writes the value wait for it, and the program would hang. So no engine decides a move while
// one may be waiting (docs/configuration.md, "Modes").
//
// A wait counts from its driver call's entry. At the call's exit an event is recorded after it in
// its stream (EventOps, the driver's in the library, a fake in the tests); it has passed once that
// event has fired. Where none could be recorded then (a capture ran in another thread), one
// recorded later in the same stream fires after the wait all the same: in the legacy stream from
// any thread whose context is the stream's, in a per-thread stream from its own thread, in any
// stream by the next wait there (a stream the program made may be destroyed meanwhile, and
// deepum does not see that). Until then the wait holds every engine.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace deepum::core {

class ValueWaits {
 public:
  // A stream: the context it belongs to and its stream id (core/stream_id.hpp), in which the
  // per-thread and legacy streams have one value in every context.
  struct Stream {
    std::uint64_t context = 0, id = 0;
    bool operator==(const Stream&) const = default;
  };
  // The events, one kept per stream.
  class EventOps {
   public:
    virtual ~EventOps() = default;
    // Records `event` after the work enqueued so far in `stream`, creating it where null (or
    // anew, where the record fails). False: none recorded (the calling thread's context is not
    // the stream's, the stream is capturing into a graph, which would take the event in, or the
    // driver refused).
    virtual bool record(const Stream& stream, void*& event) noexcept = 0;
    // Whether it has fired, or can no longer fire (its context is gone).
    virtual bool fired(void* event) noexcept = 0;
  };

  explicit ValueWaits(EventOps& ops) : ops_(ops) {}
  ValueWaits(const ValueWaits&) = delete;
  ValueWaits& operator=(const ValueWaits&) = delete;

  // At the wait's driver call entry, on the program's thread.
  void entered(Stream stream) noexcept;
  // Whether this thread has entered a wait whose exit is not yet told.
  static bool entered_on_this_thread() noexcept;
  // At the same call's exit, on the same thread (nothing where this thread entered none here).
  // `can_record` false: no event may be recorded now (a stream capture runs in another thread).
  void enqueued(bool can_record) noexcept;
  // Whether one may still be waiting. Two atomic loads while none was entered or is waiting; else
  // the events are queried, and recorded where they could not be at the waits' exits (so only
  // where no capture runs).
  bool any_waiting() noexcept;
  // The context is gone, and its events with it: its waits no longer wait. Called inside the
  // driver's destruction of the context, it never blocks: where another thread holds the lock,
  // that thread drops them before it asks any event again.
  void forget_context(std::uint64_t context) noexcept;

 private:
  struct Wait {
    Stream stream;
    void* event = nullptr;       // the latest one recorded in the stream
    bool event_pending = false;  // recorded after a wait, not yet fired
    bool unrecorded = false;     // a wait no event was recorded after yet
    bool waiting() const { return event_pending || unrecorded; }
  };
  void set_waiting(Wait& wait, bool event_pending, bool unrecorded);
  void record(Wait& wait);       // after every wait of its stream so far
  void drop_forgotten_locked();  // the waits of a context forget_context could not lock for

  EventOps& ops_;
  std::mutex mutex_;
  std::vector<Wait> waits_;  // one per stream
  std::atomic<std::uint32_t> entered_{0}, waiting_{0};
  std::atomic<std::uint64_t> forgotten_context_{0};  // 0: none
};

}  // namespace deepum::core
