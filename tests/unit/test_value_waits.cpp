// core::ValueWaits: when the program's stream memory waits may still be waiting, against fake events.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <thread>

#include "deepum/core/stream_id.hpp"
#include "deepum/core/value_waits.hpp"

using deepum::core::ValueWaits;

namespace {

// Events as counters: an event fires once the test says its stream has run past it.
class FakeEvents final : public ValueWaits::EventOps {
 public:
  bool record(const ValueWaits::Stream& stream, void*& event) noexcept override {
    ++records;
    if (refuse) return false;
    if (event == nullptr) event = reinterpret_cast<void*>(++created);
    recorded_at[event] = ++enqueued[stream.id];
    stream_of[event] = stream.id;
    return true;
  }
  bool fired(void* event) noexcept override { return ran[stream_of[event]] >= recorded_at[event]; }
  // Everything enqueued in `stream` so far has run.
  void run(std::uint64_t stream) { ran[stream] = enqueued[stream]; }

  bool refuse = false;
  int records = 0;
  std::uintptr_t created = 0;
  std::map<std::uint64_t, std::uint64_t> enqueued, ran;
  std::map<void*, std::uint64_t> recorded_at, stream_of;
};

constexpr std::uint64_t kContext = 7, kStreamA = 0x1000, kStreamB = 0x2000;

}  // namespace

TEST_CASE("a stream memory wait counts from its entry until the event recorded at its exit fires") {
  FakeEvents events;
  ValueWaits waits(events);
  CHECK_FALSE(waits.any_waiting());
  CHECK(events.records == 0);
  waits.entered({kContext, kStreamA});
  CHECK(ValueWaits::entered_on_this_thread());
  CHECK(waits.any_waiting());  // inside its driver call: no event yet
  waits.enqueued(true);
  CHECK_FALSE(ValueWaits::entered_on_this_thread());
  CHECK(waits.any_waiting());
  events.run(kStreamA);
  CHECK_FALSE(waits.any_waiting());
  CHECK_FALSE(waits.any_waiting());  // and stays so: nothing queried once none waits
  CHECK(events.records == 1);
}

TEST_CASE("waits in two streams: held until both have passed; one event kept per stream") {
  FakeEvents events;
  ValueWaits waits(events);
  for (std::uint64_t stream : {kStreamA, kStreamB, kStreamA}) {
    waits.entered({kContext, stream});
    waits.enqueued(true);
  }
  CHECK(events.created == 2);
  events.run(kStreamB);
  CHECK(waits.any_waiting());
  events.run(kStreamA);
  CHECK_FALSE(waits.any_waiting());
}

TEST_CASE("a wait no event could follow at its exit gets one recorded later, which fires after it") {
  FakeEvents events;
  ValueWaits waits(events);
  constexpr std::uint64_t kLegacy = 0;
  waits.entered({kContext, kLegacy});
  waits.enqueued(/*can_record=*/false);  // a capture ran in another thread
  CHECK(events.records == 0);
  events.run(kLegacy);
  CHECK(waits.any_waiting());  // recorded now, behind whatever the stream holds
  CHECK(events.records == 1);
  events.run(kLegacy);
  CHECK_FALSE(waits.any_waiting());

  // The driver refuses: held, and asked again at each query.
  events.refuse = true;
  waits.entered({kContext, kLegacy});
  waits.enqueued(true);
  CHECK(waits.any_waiting());
  CHECK(waits.any_waiting());
  CHECK(events.records == 4);
  events.refuse = false;
  CHECK(waits.any_waiting());
  events.run(kLegacy);
  CHECK_FALSE(waits.any_waiting());
}

TEST_CASE("in a stream the program made, a wait with no event is held until a later wait's event fires") {
  FakeEvents events;
  ValueWaits waits(events);
  waits.entered({kContext, kStreamA});
  waits.enqueued(false);
  events.run(kStreamA);
  CHECK(waits.any_waiting());
  CHECK(events.records == 0);  // the stream may have been destroyed: never recorded in later
  waits.entered({kContext, kStreamA});
  waits.enqueued(true);
  CHECK(waits.any_waiting());
  events.run(kStreamA);
  CHECK_FALSE(waits.any_waiting());
}

TEST_CASE("a later wait in a stream whose earlier wait's event fired is not released by that event") {
  FakeEvents events;
  ValueWaits waits(events);
  waits.entered({kContext, kStreamA});
  waits.enqueued(true);
  waits.entered({kContext, kStreamA});
  waits.enqueued(false);  // no event after this one
  events.run(kStreamA);   // the first wait's event fires
  CHECK(waits.any_waiting());
  waits.forget_context(kContext);
  CHECK_FALSE(waits.any_waiting());
}

TEST_CASE("a per-thread stream's wait is recorded only by its own thread") {
  FakeEvents events;
  ValueWaits waits(events);
  const std::uint64_t per_thread = deepum::core::stream_id(deepum::core::kPerThreadStreamHandle);
  waits.entered({kContext, per_thread});
  waits.enqueued(false);
  std::thread other([&] { CHECK(waits.any_waiting()); });
  other.join();
  CHECK(events.records == 0);  // another thread would record in its own per-thread stream
  CHECK(waits.any_waiting());  // its own thread records
  CHECK(events.records == 1);
  events.run(per_thread);
  CHECK_FALSE(waits.any_waiting());
}

TEST_CASE(
    "a wait entered on one thread is not ended by another thread's exit; a context's waits go with it") {
  FakeEvents events;
  ValueWaits waits(events);
  waits.entered({kContext, kStreamA});
  std::thread other([&] {
    CHECK_FALSE(ValueWaits::entered_on_this_thread());
    waits.enqueued(true);  // another call's exit on another thread
  });
  other.join();
  CHECK(events.records == 0);
  CHECK(waits.any_waiting());
  waits.enqueued(true);
  CHECK(waits.any_waiting());
  waits.forget_context(kContext);  // destroyed: its events can no longer be asked
  CHECK_FALSE(waits.any_waiting());
}
