// The Chrome Trace Event Format (JSON object form), which ui.perfetto.dev and chrome://tracing open:
// kernels, copies and memsets per CUDA stream, page faults and migrations on the GPU; hints,
// resident memory, host launches, managed ranges and the program allocator's buffers for deepum.
// docs/trace-format.md describes the tracks.
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "deepum/core/events.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::core {

// Streams events to the output as they come; only function names, stream tracks and launches
// still waiting for their execution stay in memory. Call it from one thread at a time: there is no
// locking. Nothing throws: failures become a false return and error(). A writer destroyed while
// still open finishes the document.
class PerfettoJsonWriter {
 public:
  PerfettoJsonWriter() = default;
  PerfettoJsonWriter(const PerfettoJsonWriter&) = delete;
  PerfettoJsonWriter& operator=(const PerfettoJsonWriter&) = delete;
  ~PerfettoJsonWriter();

  // Timestamps are shown relative to base_time, or without one to the first event written (so
  // an earlier event written later gets a negative ts).
  bool open(const std::string& path, std::optional<Timestamp> base_time = std::nullopt) noexcept;
  bool open(std::ostream& stream, std::string name = "<stream>",
            std::optional<Timestamp> base_time = std::nullopt) noexcept;

  // Key/value strings for the document's "metadata" object, written by finish().
  bool set_metadata(const TraceMetadata& metadata) noexcept;
  // Names the kernels of `function`; the first name given wins.
  bool define_function(std::uint64_t function, std::string_view name) noexcept;
  bool write(const KernelLaunch& launch) noexcept;
  // A kernel is named after its launch, if it came first; a copy or memset after its kind and size.
  bool write(const KernelExecution& execution) noexcept;
  bool write(const PageFault& fault) noexcept;
  bool write(const Migration& migration) noexcept;
  bool write(const RangeEvent& range) noexcept;
  bool write(const Hint& hint) noexcept;
  bool write(const ResidentSample& sample) noexcept;
  // On a track named at its first event, so documents without buffer events lack it.
  bool write(const BufferEvent& buffer) noexcept;
  bool finish() noexcept;  // closes the event array and the document

  bool ok() const { return !output_.failed(); }
  const std::string& error() const { return output_.error(); }

 private:
  // What a kernel's track event needs from its launch.
  struct PendingLaunch {
    std::uint64_t function = 0;
    std::uint64_t execution_key = 0;
    std::array<std::uint32_t, 3> grid{};
    std::array<std::uint32_t, 3> block{};
    std::uint16_t pointer_count = 0;
  };

  bool start(bool opened, std::optional<Timestamp> base_time) noexcept;
  template <typename Body>
  bool guarded(Body&& body) noexcept;
  bool emit();  // writes event_ as the next array element
  void begin_event(std::string_view name, std::string_view phase, Timestamp time, int pid,
                   std::optional<int> tid);
  void append_time(Timestamp time);
  void append_duration(Timestamp start, Timestamp end);
  bool emit_thread_name(int pid, int tid, std::string_view name);
  std::string_view function_name(std::uint64_t function);
  int stream_track(std::uint32_t stream_id);
  void remember_launch(const KernelLaunch& launch);

  BufferedOutput output_;
  bool open_ = false;
  bool first_event_ = true;
  std::optional<Timestamp> base_time_;
  std::string event_;  // reused for every event, so writing one does not allocate
  std::string scratch_;
  TraceMetadata metadata_;
  std::unordered_map<std::uint64_t, std::string> function_names_;
  std::unordered_map<std::uint32_t, int> stream_tracks_;
  std::unordered_map<std::uint64_t, PendingLaunch> pending_launches_;  // by correlation id
  std::uint64_t newest_correlation_ = 0;
  bool buffer_track_named_ = false;
};

// Converts a compact trace, events in time order. On failure returns false and, if `error` is
// given, says why.
bool write_perfetto_json(const Trace& trace, const std::string& path, std::string* error);
bool write_perfetto_json(const Trace& trace, std::ostream& out, std::string* error);

// Checks a document's structure: a traceEvents array whose events have name, ph (a known phase),
// ts, pid and (except counters and process metadata) tid; X events with dur >= 0; counters with
// numeric args; a process_name for every pid and a thread_name for every thread used; and deepum's
// fixed tracks. Returns the first problem found (malformed JSON and numbers past a double's range
// included), or an empty string; never throws.
std::string validate_perfetto_json(std::string_view json_text);

}  // namespace deepum::core
