// Any bytes as a .dtrace file. The reader must stop at its verified end record or with an error
// that says what was wrong, never crash. Every record it hands out before that must be safe for
// every reader of traces, in bounded time and memory: the summary, the residency replay, the
// Perfetto conversion (whose output must then validate) and the simulator's workload. The records
// go to them even when the end record fails, since a mutated input rarely keeps its checksum.
#include <cstddef>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/residency_replay.hpp"
#include "deepum/core/trace_file.hpp"
#include "deepum/sim/workload.hpp"

namespace {

using namespace deepum;

// Caps far below the readers' defaults, so that each input runs in milliseconds; the defaults'
// refusals are unit-tested.
constexpr std::uint64_t kMaxManagedBytes = std::uint64_t{64} << 30;
constexpr std::size_t kMaxNamedBlocks = std::size_t{1} << 16;

void collect(core::Trace& trace, core::TraceRecord&& record) {
  std::visit(
      [&trace](auto&& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, core::FunctionName>) trace.function_names[r.function] = r.name;
        if constexpr (std::is_same_v<T, core::KernelLaunch>) trace.launches.push_back(r);
        if constexpr (std::is_same_v<T, core::KernelExecution>) trace.executions.push_back(r);
        if constexpr (std::is_same_v<T, core::PageFault>) trace.faults.push_back(r);
        if constexpr (std::is_same_v<T, core::Migration>) trace.migrations.push_back(r);
        if constexpr (std::is_same_v<T, core::RangeEvent>) trace.ranges.push_back(r);
        if constexpr (std::is_same_v<T, core::Hint>) trace.hints.push_back(r);
        if constexpr (std::is_same_v<T, core::ResidentSample>) trace.resident_samples.push_back(r);
        if constexpr (std::is_same_v<T, core::LaunchOperands>) trace.launch_operands.push_back(r);
        if constexpr (std::is_same_v<T, core::CopyLaunch>) trace.copies.push_back(r);
        if constexpr (std::is_same_v<T, core::BufferEvent>) trace.buffer_events.push_back(r);
      },
      std::move(record));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  core::TraceReader reader;
  core::Trace trace;
  sim::WorkloadOptions options;
  options.max_managed_bytes = kMaxManagedBytes;
  options.max_named_blocks = kMaxNamedBlocks;
  sim::WorkloadBuilder builder(options);
  if (reader.open_memory(bytes, "fuzz.dtrace")) {
    while (std::optional<core::TraceRecord> record = reader.next()) {
      builder.add(*record);
      collect(trace, std::move(*record));
    }
  }
  if (!reader.finished() && reader.error().empty()) __builtin_trap();  // stopped without saying why
  trace.header = reader.header();

  (void)core::summarize(trace);
  std::vector<core::ResidencyInterval> timeline;
  (void)core::replay_residency(trace, std::uint64_t{1} << 30, &timeline, core::Timestamp{1} << 50,
                               kMaxManagedBytes);
  std::ostringstream json;
  std::string error;
  if (core::write_perfetto_json(trace, json, &error) && !core::validate_perfetto_json(json.str()).empty())
    __builtin_trap();  // the writer wrote what the checker refuses
  (void)builder.finish();
  return 0;
}
