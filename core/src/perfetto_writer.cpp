#include "deepum/core/perfetto_writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <vector>

#include "deepum/core/statistics.hpp"

namespace deepum::core {

namespace {

constexpr int kGpuPid = 1;
constexpr int kDeepumPid = 2;
constexpr int kFaultTid = 1;
constexpr int kHostToDeviceTid = 2;
constexpr int kDeviceToHostTid = 3;
constexpr int kFirstStreamTid = 10;
constexpr int kLaunchTid = 1;
constexpr int kHintTid = 2;
constexpr int kRangeTid = 3;
constexpr int kBufferTid = 4;  // not a fixed track: named at the first buffer event
constexpr std::string_view kResidentCounter = "resident bytes";

struct Track {
  int pid;
  int tid;
  std::string_view name;
};
constexpr std::array<Track, 2> kProcesses = {{{kGpuPid, 0, "GPU"}, {kDeepumPid, 0, "deepum"}}};
// Written when the document opens, so they are there even when empty; streams come as seen.
constexpr std::array<Track, 6> kFixedThreads = {{
    {kGpuPid, kFaultTid, "page faults"},
    {kGpuPid, kHostToDeviceTid, "H2D migrations"},
    {kGpuPid, kDeviceToHostTid, "D2H migrations"},
    {kDeepumPid, kLaunchTid, "host launches"},
    {kDeepumPid, kHintTid, "hints"},
    {kDeepumPid, kRangeTid, "managed ranges"},
}};

// Launches whose execution never arrives (a lost activity record) must not pile up for the whole
// run: past this many, those far older than the newest are dropped.
constexpr std::size_t kMaxPendingLaunches = std::size_t{1} << 18;

// Length of the valid UTF-8 sequence starting at text[i], or 0 if it is not one (RFC 3629: no
// overlong forms, no surrogates, nothing past U+10FFFF).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (i + length > text.size() || at(i + 1) < low || at(i + 1) > high) return 0;
  for (std::size_t k = 2; k < length; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xBF) return 0;
  }
  return length;
}

// A JSON string literal. Bytes that are not valid UTF-8 become U+FFFD so the document stays valid.
void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (const std::size_t length = utf8_sequence_length(text, i); length > 0) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    } else {
      out += "\\ufffd";
    }
    ++i;
  }
  out += '"';
}

std::string_view access_name(FaultAccess access) {
  switch (access) {
    case FaultAccess::unknown:
      return "unknown";
    case FaultAccess::read:
      return "read";
    case FaultAccess::write:
      return "write";
    case FaultAccess::atomic:
      return "atomic";
    case FaultAccess::prefetch:
      return "prefetch";
  }
  return "unknown";
}

std::string_view cause_name(MigrationCause cause) {
  switch (cause) {
    case MigrationCause::unknown:
      return "unknown cause";
    case MigrationCause::user:
      return "user";
    case MigrationCause::coherence:
      return "coherence";
    case MigrationCause::prefetch:
      return "prefetch";
    case MigrationCause::eviction:
      return "eviction";
    case MigrationCause::access_counters:
      return "access counters";
    case MigrationCause::deepum_eviction_done:
      return "deepum eviction done";
    case MigrationCause::deepum_prefetch_done:
      return "deepum prefetch done";
  }
  return "unknown cause";
}

// CUpti_ActivityMemcpyKind, without the CUPTI headers.
std::string_view copy_kind_name(std::uint8_t kind) {
  static constexpr std::array<std::string_view, 11> kNames = {
      "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind < kNames.size() ? kNames[kind] : "unknown";
}

std::string_view hint_name(Hint::Kind kind) {
  switch (kind) {
    case Hint::Kind::prefetch_to_gpu:
      return "prefetch to GPU";
    case Hint::Kind::evict_to_host:
      return "evict to host";
    case Hint::Kind::discard:
      return "discard";
  }
  return "hint";
}

template <typename... Args>
void append(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

}  // namespace

PerfettoJsonWriter::~PerfettoJsonWriter() {
  if (open_) finish();
}

template <typename Body>
bool PerfettoJsonWriter::guarded(Body&& body) noexcept {
  if (!open_) return output_.fail(output_.failed() ? output_.error() : "no document is open");
  try {
    return body();
  } catch (...) {
    return output_.fail("out of memory while writing the trace");
  }
}

bool PerfettoJsonWriter::open(const std::string& path, std::optional<Timestamp> base_time) noexcept {
  if (open_) return output_.fail("a document is already open");
  return start(output_.open(path), base_time);
}

bool PerfettoJsonWriter::open(std::ostream& stream, std::string name,
                              std::optional<Timestamp> base_time) noexcept {
  if (open_) return output_.fail("a document is already open");
  return start(output_.open(stream, std::move(name)), base_time);
}

bool PerfettoJsonWriter::start(bool opened, std::optional<Timestamp> base_time) noexcept {
  if (!opened) return false;
  open_ = true;
  first_event_ = true;
  base_time_ = base_time;
  return guarded([&] {
    metadata_.clear();
    function_names_.clear();
    stream_tracks_.clear();
    pending_launches_.clear();
    newest_correlation_ = 0;
    buffer_track_named_ = false;
    bool ok = output_.write("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
    for (const Track& process : kProcesses) {
      event_.clear();
      append(event_, "{{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"args\":{{\"name\":",
             process.pid);
      append_json_string(event_, process.name);
      event_ += "}}";
      ok = ok && emit();
    }
    for (const Track& thread : kFixedThreads)
      ok = ok && emit_thread_name(thread.pid, thread.tid, thread.name);
    return ok;
  });
}

bool PerfettoJsonWriter::emit() {
  const bool ok = output_.write(first_event_ ? "\n" : ",\n") && output_.write(event_);
  first_event_ = false;
  return ok;
}

bool PerfettoJsonWriter::emit_thread_name(int pid, int tid, std::string_view name) {
  event_.clear();
  append(event_,
         "{{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":{},\"tid\":{},\"args\":{{\"name\":", pid,
         tid);
  append_json_string(event_, name);
  event_ += "}}";
  return emit();
}

void PerfettoJsonWriter::append_time(Timestamp time) {
  if (!base_time_) base_time_ = time;
  const bool negative = time < *base_time_;
  const std::uint64_t ns = negative ? *base_time_ - time : time - *base_time_;
  append(event_, "{}{}.{:03}", negative ? "-" : "", ns / 1000, ns % 1000);  // microseconds, exactly
}

void PerfettoJsonWriter::append_duration(Timestamp start, Timestamp end) {
  const std::uint64_t ns = end > start ? end - start : 0;
  append(event_, ",\"dur\":{}.{:03}", ns / 1000, ns % 1000);
}

void PerfettoJsonWriter::begin_event(std::string_view name, std::string_view phase, Timestamp time, int pid,
                                     std::optional<int> tid) {
  event_.clear();
  event_ += "{\"name\":";
  append_json_string(event_, name);
  append(event_, ",\"ph\":\"{}\",\"ts\":", phase);
  append_time(time);
  append(event_, ",\"pid\":{}", pid);
  if (tid) append(event_, ",\"tid\":{}", *tid);
  if (phase == "i") event_ += ",\"s\":\"t\"";  // an instant on its thread's track
}

std::string_view PerfettoJsonWriter::function_name(std::uint64_t function) {
  if (auto found = function_names_.find(function); found != function_names_.end()) return found->second;
  scratch_ = fmt::format("kernel {:#x}", function);
  return scratch_;
}

int PerfettoJsonWriter::stream_track(std::uint32_t stream_id) {
  const auto [found, inserted] =
      stream_tracks_.try_emplace(stream_id, kFirstStreamTid + static_cast<int>(stream_tracks_.size()));
  if (inserted) emit_thread_name(kGpuPid, found->second, fmt::format("stream {}", stream_id));
  return found->second;
}

void PerfettoJsonWriter::remember_launch(const KernelLaunch& launch) {
  newest_correlation_ = std::max(newest_correlation_, launch.correlation_id);
  if (pending_launches_.size() >= kMaxPendingLaunches) {
    const std::uint64_t keep_from =
        newest_correlation_ - std::min<std::uint64_t>(newest_correlation_, kMaxPendingLaunches / 2);
    std::erase_if(pending_launches_, [&](const auto& entry) { return entry.first < keep_from; });
  }
  pending_launches_[launch.correlation_id] =
      PendingLaunch{launch.function, launch.execution_key, launch.grid, launch.block, launch.pointer_count};
}

bool PerfettoJsonWriter::set_metadata(const TraceMetadata& metadata) noexcept {
  return guarded([&] {
    metadata_ = metadata;
    return true;
  });
}

bool PerfettoJsonWriter::define_function(std::uint64_t function, std::string_view name) noexcept {
  return guarded([&] {
    function_names_.try_emplace(function, name);
    return true;
  });
}

bool PerfettoJsonWriter::write(const KernelLaunch& launch) noexcept {
  return guarded([&] {
    remember_launch(launch);
    const std::string_view name = function_name(launch.function);
    begin_event(name, "i", launch.host_time, kDeepumPid, kLaunchTid);
    append(event_, ",\"args\":{{\"correlation_id\":{},\"function\":", launch.correlation_id);
    append_json_string(event_, name);
    event_ += "}}";
    return emit();
  });
}

bool PerfettoJsonWriter::write(const KernelExecution& execution) noexcept {
  return guarded([&] {
    const int tid = stream_track(execution.stream_id);
    if (execution.operation != GpuOperation::kernel) {
      // A copy or memset: no launch and no function, named by what it did.
      const bool copy = execution.operation == GpuOperation::memcpy;
      const std::string_view kind = copy ? copy_kind_name(execution.copy_kind) : "memset";
      begin_event(copy ? fmt::format("memcpy {} {}", kind, format_bytes(execution.bytes))
                       : fmt::format("memset {}", format_bytes(execution.bytes)),
                  "X", execution.start, kGpuPid, tid);
      append_duration(execution.start, execution.end);
      append(event_, ",\"args\":{{\"kind\":\"{}\",\"bytes\":{},\"correlation_id\":{},\"device\":{}}}}}", kind,
             execution.bytes, execution.correlation_id, execution.device);
      return emit();
    }
    const auto launch = pending_launches_.find(execution.correlation_id);
    if (launch == pending_launches_.end()) {
      begin_event(execution.deepums_own() ? std::string(kOwnCopyKernelName)
                                          : fmt::format("kernel (correlation {})", execution.correlation_id),
                  "X", execution.start, kGpuPid, tid);
      append_duration(execution.start, execution.end);
      append(event_, ",\"args\":{{\"correlation_id\":{},\"device\":{}}}}}", execution.correlation_id,
             execution.device);
      return emit();
    }
    const PendingLaunch& l = launch->second;
    begin_event(function_name(l.function), "X", execution.start, kGpuPid, tid);
    append_duration(execution.start, execution.end);
    append(event_,
           ",\"args\":{{\"correlation_id\":{},\"execution_key\":\"{:#x}\",\"grid\":[{},{},{}],\"block\":[{},{"
           "},{}],"
           "\"managed_pointers\":{},\"device\":{}}}}}",
           execution.correlation_id, l.execution_key, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
           l.block[2], l.pointer_count, execution.device);
    pending_launches_.erase(launch);
    return emit();
  });
}

bool PerfettoJsonWriter::write(const PageFault& fault) noexcept {
  return guarded([&] {
    begin_event("page fault", "i", fault.start, kGpuPid, kFaultTid);
    append(event_, ",\"args\":{{\"address\":\"{:#x}\",\"count\":{},\"access\":\"{}\"}}}}", fault.address,
           fault.fault_count, access_name(fault.access));
    return emit();
  });
}

bool PerfettoJsonWriter::write(const Migration& migration) noexcept {
  return guarded([&] {
    const bool to_device = migration.direction == MigrationDirection::host_to_device;
    begin_event(fmt::format("{} {}", to_device ? "H2D" : "D2H", cause_name(migration.cause)), "X",
                migration.start, kGpuPid, to_device ? kHostToDeviceTid : kDeviceToHostTid);
    append_duration(migration.start, migration.end);
    append(event_, ",\"args\":{{\"bytes\":{},\"cause\":\"{}\",\"address\":\"{:#x}\"}}}}", migration.bytes,
           cause_name(migration.cause), migration.address);
    return emit();
  });
}

bool PerfettoJsonWriter::write(const RangeEvent& range) noexcept {
  return guarded([&] {
    begin_event(range.kind == RangeEvent::Kind::allocated ? "allocate" : "free", "i", range.time, kDeepumPid,
                kRangeTid);
    append(event_, ",\"args\":{{\"address\":\"{:#x}\",\"bytes\":{}}}}}", range.address, range.bytes);
    return emit();
  });
}

bool PerfettoJsonWriter::write(const Hint& hint) noexcept {
  return guarded([&] {
    begin_event(hint_name(hint.kind), "i", hint.time, kDeepumPid, kHintTid);
    append(event_, ",\"args\":{{\"address\":\"{:#x}\",\"bytes\":{}}}}}", hint.address, hint.bytes);
    return emit();
  });
}

bool PerfettoJsonWriter::write(const BufferEvent& buffer) noexcept {
  return guarded([&] {
    bool ok = true;
    if (!buffer_track_named_) {
      ok = emit_thread_name(kDeepumPid, kBufferTid, "allocator buffers");
      buffer_track_named_ = true;
    }
    const bool returned = buffer.kind == BufferEvent::Kind::returned;
    begin_event(returned ? "buffer returned" : "buffer handed out", "i", buffer.time, kDeepumPid, kBufferTid);
    append(event_, ",\"args\":{{\"address\":\"{:#x}\",\"bytes\":{}", buffer.address, buffer.bytes);
    if (returned) append(event_, ",\"stream\":\"{:#x}\"", buffer.stream);
    event_ += "}}";
    return ok && emit();
  });
}

bool PerfettoJsonWriter::write(const ResidentSample& sample) noexcept {
  return guarded([&] {
    begin_event(kResidentCounter, "C", sample.time, kDeepumPid, std::nullopt);
    append(event_, ",\"args\":{{\"estimated\":{}", sample.estimated_resident_bytes);
    // 0 means cuMemGetInfo was not asked: leave the series without a sample rather than drop to 0.
    if (sample.measured_used_bytes != 0) append(event_, ",\"measured\":{}", sample.measured_used_bytes);
    event_ += "}}";
    return emit();
  });
}

bool PerfettoJsonWriter::finish() noexcept {
  if (!open_) return ok();
  const bool written = guarded([&] {
    event_ = "\n],\"metadata\":{";
    bool first = true;
    for (const auto& [key, value] : metadata_) {
      if (!first) event_ += ',';
      first = false;
      append_json_string(event_, key);
      event_ += ':';
      append_json_string(event_, value);
    }
    // A string: nanosecond timestamps do not fit a JSON number's 53-bit precision.
    if (base_time_) append(event_, "{}\"deepum_base_timestamp_ns\":\"{}\"", first ? "" : ",", *base_time_);
    event_ += "}}\n";
    return output_.write(event_);
  });
  open_ = false;
  return output_.close() && written;
}

namespace {

// Writes the trace's events in time order into a writer that `open` opens with the base time.
template <typename Open>
bool convert(const Trace& trace, Open&& open, std::string* error) {
  // Time order keeps the events readable and each launch ahead of its execution, so the writer
  // holds only the launches in flight.
  enum class Kind : std::uint8_t { launch, execution, fault, migration, range, hint, sample, buffer };
  struct Item {
    Timestamp time;
    Kind kind;
    std::size_t index;
    bool operator<(const Item& other) const {
      return std::tie(time, kind, index) < std::tie(other.time, other.kind, other.index);
    }
  };
  std::vector<Item> items;
  items.reserve(trace.launches.size() + trace.executions.size() + trace.faults.size() +
                trace.migrations.size() + trace.ranges.size() + trace.hints.size() +
                trace.resident_samples.size() + trace.buffer_events.size());
  const auto add = [&items](const auto& records, Kind kind, auto time_of) {
    for (std::size_t i = 0; i < records.size(); ++i) items.push_back({time_of(records[i]), kind, i});
  };
  add(trace.launches, Kind::launch, [](const KernelLaunch& r) { return r.host_time; });
  add(trace.executions, Kind::execution, [](const KernelExecution& r) { return r.start; });
  add(trace.faults, Kind::fault, [](const PageFault& r) { return r.start; });
  add(trace.migrations, Kind::migration, [](const Migration& r) { return r.start; });
  add(trace.ranges, Kind::range, [](const RangeEvent& r) { return r.time; });
  add(trace.hints, Kind::hint, [](const Hint& r) { return r.time; });
  add(trace.resident_samples, Kind::sample, [](const ResidentSample& r) { return r.time; });
  add(trace.buffer_events, Kind::buffer, [](const BufferEvent& r) { return r.time; });
  std::sort(items.begin(), items.end());

  PerfettoJsonWriter writer;
  const std::optional<TimeSpan> span = time_span(trace);
  bool ok = open(writer, span ? std::optional<Timestamp>(span->first) : std::nullopt) &&
            writer.set_metadata(trace.header.metadata);
  for (const auto& [function, name] : trace.function_names) ok = ok && writer.define_function(function, name);
  for (const Item& item : items) {
    if (!ok) break;
    switch (item.kind) {
      case Kind::launch:
        ok = writer.write(trace.launches[item.index]);
        break;
      case Kind::execution:
        ok = writer.write(trace.executions[item.index]);
        break;
      case Kind::fault:
        ok = writer.write(trace.faults[item.index]);
        break;
      case Kind::migration:
        ok = writer.write(trace.migrations[item.index]);
        break;
      case Kind::range:
        ok = writer.write(trace.ranges[item.index]);
        break;
      case Kind::hint:
        ok = writer.write(trace.hints[item.index]);
        break;
      case Kind::sample:
        ok = writer.write(trace.resident_samples[item.index]);
        break;
      case Kind::buffer:
        ok = writer.write(trace.buffer_events[item.index]);
        break;
    }
  }
  ok = writer.finish() && ok;
  if (!ok && error != nullptr) *error = writer.error();
  return ok;
}

}  // namespace

bool write_perfetto_json(const Trace& trace, const std::string& path, std::string* error) {
  return convert(
      trace,
      [&path](PerfettoJsonWriter& writer, std::optional<Timestamp> base) { return writer.open(path, base); },
      error);
}

bool write_perfetto_json(const Trace& trace, std::ostream& out, std::string* error) {
  return convert(
      trace,
      [&out](PerfettoJsonWriter& writer, std::optional<Timestamp> base) {
        return writer.open(out, "<stream>", base);
      },
      error);
}

// ---- Validation ----

namespace {

using nlohmann::json;

const std::set<std::string, std::less<>> kPhases = {"B", "E", "X", "i", "I", "C", "b", "n", "e",
                                                    "s", "t", "f", "P", "O", "N", "D", "M", "R"};
const std::set<std::string, std::less<>> kMetadataNames = {
    "process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"};

std::string validate_event(const json& event, std::map<std::int64_t, std::string>& process_names,
                           std::map<std::pair<std::int64_t, std::int64_t>, std::string>& thread_names,
                           std::set<std::pair<std::int64_t, std::int64_t>>& threads_used,
                           std::set<std::int64_t>& processes_used) {
  if (!event.is_object()) return "is not an object";
  if (!event.contains("name") || !event["name"].is_string()) return "has no string \"name\"";
  if (!event.contains("ph") || !event["ph"].is_string()) return "has no string \"ph\"";
  const std::string& phase = event["ph"].get_ref<const std::string&>();
  if (!kPhases.contains(phase)) return fmt::format("has an unknown phase \"{}\"", phase);
  if (!event.contains("ts") || !event["ts"].is_number()) return "has no numeric \"ts\"";
  if (!event.contains("pid") || !event["pid"].is_number_integer()) return "has no integer \"pid\"";
  const std::string& name = event["name"].get_ref<const std::string&>();
  const bool process_scoped = phase == "C" || (phase == "M" && name.starts_with("process_"));
  const bool has_tid = event.contains("tid") && event["tid"].is_number_integer();
  if (!process_scoped && !has_tid) return fmt::format("(a \"{}\" event) has no integer \"tid\"", phase);
  const auto pid = event["pid"].get<std::int64_t>();
  const std::int64_t tid = has_tid ? event["tid"].get<std::int64_t>() : 0;
  const bool has_args = event.contains("args") && event["args"].is_object();

  if (phase == "X" &&
      (!event.contains("dur") || !event["dur"].is_number() || event["dur"].get<double>() < 0)) {
    return "is an \"X\" event without a non-negative \"dur\"";
  }
  if ((phase == "i" || phase == "I") && event.contains("s")) {
    const json& scope = event["s"];
    if (!scope.is_string() || (scope != "g" && scope != "p" && scope != "t"))
      return "has a scope \"s\" that is not g, p or t";
  }
  if (phase == "C") {
    if (!has_args || event["args"].empty()) return "is a counter without \"args\"";
    for (const auto& [series, value] : event["args"].items()) {
      if (!value.is_number()) return fmt::format("is a counter whose series \"{}\" is not a number", series);
    }
  }
  if (phase == "M") {
    if (!kMetadataNames.contains(name))
      return fmt::format("is a metadata event with an unknown name \"{}\"", name);
    if (name == "process_name" || name == "thread_name") {
      if (!has_args || !event["args"].contains("name") || !event["args"]["name"].is_string()) {
        return fmt::format("is a {} event without a string args.name", name);
      }
      const std::string& value = event["args"]["name"].get_ref<const std::string&>();
      if (name == "process_name") {
        process_names[pid] = value;
      } else {
        thread_names[{pid, tid}] = value;
      }
    }
    return {};
  }
  processes_used.insert(pid);
  if (!process_scoped) threads_used.insert({pid, tid});
  return {};
}

std::string validate_document(const json& document) {
  if (!document.is_object()) return "the document is not a JSON object";
  if (!document.contains("traceEvents") || !document["traceEvents"].is_array())
    return "no \"traceEvents\" array";
  if (document.contains("displayTimeUnit") && document["displayTimeUnit"] != "ns" &&
      document["displayTimeUnit"] != "ms") {
    return "\"displayTimeUnit\" is neither \"ns\" nor \"ms\"";
  }
  std::map<std::int64_t, std::string> process_names;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> thread_names;
  std::set<std::pair<std::int64_t, std::int64_t>> threads_used;
  std::set<std::int64_t> processes_used;
  const json& events = document["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (std::string problem =
            validate_event(events[i], process_names, thread_names, threads_used, processes_used);
        !problem.empty()) {
      return fmt::format("traceEvents[{}] {}", i, problem);
    }
  }
  for (std::int64_t pid : processes_used) {
    if (!process_names.contains(pid)) return fmt::format("process {} has events but no process_name", pid);
  }
  for (const auto& [pid, tid] : threads_used) {
    if (!thread_names.contains({pid, tid})) {
      return fmt::format("thread {} of process {} has events but no thread_name", tid, pid);
    }
  }
  for (const Track& process : kProcesses) {
    const auto found = process_names.find(process.pid);
    if (found == process_names.end() || found->second != process.name) {
      return fmt::format("no process_name \"{}\" for pid {}", process.name, process.pid);
    }
  }
  for (const Track& thread : kFixedThreads) {
    const auto found = thread_names.find({thread.pid, thread.tid});
    if (found == thread_names.end() || found->second != thread.name) {
      return fmt::format("no thread_name \"{}\" for pid {} tid {}", thread.name, thread.pid, thread.tid);
    }
  }
  return {};
}

}  // namespace

std::string validate_perfetto_json(std::string_view json_text) {
  try {
    // A number past a double's range (1E400) is an out_of_range error, not a parse_error.
    return validate_document(json::parse(json_text));
  } catch (const json::exception& e) {
    return fmt::format("not valid JSON: {}", e.what());
  } catch (const std::bad_alloc&) {
    return "not enough memory to hold the document";
  }
}

}  // namespace deepum::core
