#include "deepum/core/trace_commands.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/core/input_file.hpp"
#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/residency_replay.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::core {

namespace {

constexpr std::string_view kTraceUsage =
    "deepum: trace check PREFIX | trace summary FILE | trace convert FILE OUT | trace residency FILE "
    "LIMIT [--timeline MS]\n";

int bad_input(std::FILE* err, std::string_view message) {
  fmt::print(err, "{}\n", message);
  return kTraceCommandBadInput;
}

// check: PREFIX.dtrace and PREFIX.perfetto.json; summary: FILE.
int check_or_summarize(std::span<const std::string> args, std::FILE* out, std::FILE* err) {
  const bool check = args[0] == "check";
  const std::string compact = check ? args[1] + ".dtrace" : args[1];
  const TraceReadResult result = read_trace(compact);
  if (!result) return bad_input(err, result.error);
  fmt::print(out, "{}: valid\n{}", compact, summarize(*result.trace));
  if (!check) return kTraceCommandDone;
  const std::string json_path = args[1] + ".perfetto.json";
  std::string error;
  const std::optional<std::string> json = read_regular_file(json_path, kMaxPerfettoJsonBytes, error);
  if (!json) return bad_input(err, error);
  if (error = validate_perfetto_json(*json); !error.empty()) return bad_input(err, json_path + ": " + error);
  fmt::print(out, "{}: valid Perfetto JSON ({} bytes)\n", json_path, json->size());
  return kTraceCommandDone;
}

int convert(std::span<const std::string> args, std::FILE* out, std::FILE* err) {
  const TraceReadResult result = read_trace(args[1]);
  if (!result) return bad_input(err, result.error);
  std::string error;
  if (!write_perfetto_json(*result.trace, args[2], &error)) {
    fmt::print(err, "{}\n", error.empty() ? "writing " + args[2] + " failed" : error);
    return kTraceCommandFailed;
  }
  fmt::print(out, "wrote {}\n", args[2]);
  return kTraceCommandDone;
}

void print_timeline(std::FILE* out, const std::vector<ResidencyInterval>& timeline) {
  constexpr double kMiBytes = 1 << 20;
  const auto mib = [](std::uint64_t bytes) { return static_cast<double>(bytes) / kMiBytes; };
  fmt::print(out, "ms,resident_mib,estimated_mib,to_gpu_mib,to_host_mib,evictions_asked_mib\n");
  for (const ResidencyInterval& i : timeline) {
    fmt::print(out, "{:.0f},{:.0f},{:.0f},{:.0f},{:.0f},{:.0f}\n", static_cast<double>(i.start) / 1e6,
               mib(i.resident_max), mib(i.estimated_max), mib(i.to_gpu_bytes), mib(i.to_host_bytes),
               mib(i.evictions_asked_bytes));
  }
}

int residency(std::span<const std::string> args, std::FILE* out, std::FILE* err) {
  long interval_ms = 0;
  if (args.size() == 5) {
    char* end = nullptr;
    interval_ms = std::strtol(args[4].c_str(), &end, 10);
    if (end == args[4].c_str() || *end != '\0' || interval_ms <= 0 || interval_ms > 60'000) {
      return bad_input(
          err, fmt::format("deepum: trace residency: --timeline {}: give whole milliseconds, 1 to 60000",
                           args[4]));
    }
  }
  std::string why;
  const std::optional<config::SizeSpec> limit = config::parse_size(args[2], &why);
  if (!limit || limit->is_percent()) {
    return bad_input(err, fmt::format("deepum: trace residency: LIMIT {}: {}", args[2],
                                      limit ? "a percentage needs the GPU's size; give bytes or a size "
                                              "such as 3.75GiB"
                                            : why));
  }
  const TraceReadResult result = read_trace(args[1]);
  if (!result) return bad_input(err, result.error);
  std::vector<ResidencyInterval> timeline;
  const Timestamp interval_ns = static_cast<Timestamp>(interval_ms) * 1'000'000;
  const ResidencyReplay replay = replay_residency(*result.trace, limit->resolve(0), &timeline, interval_ns);
  if (!replay.error.empty()) return bad_input(err, args[1] + ": " + replay.error);
  fmt::print(out, "{}", describe(replay));
  if (interval_ms != 0) print_timeline(out, timeline);
  return kTraceCommandDone;
}

}  // namespace

int run_trace_command(std::span<const std::string> args, std::FILE* out, std::FILE* err) {
  const std::string verb = args.empty() ? "" : args[0];
  try {
    if ((verb == "check" || verb == "summary") && args.size() == 2) return check_or_summarize(args, out, err);
    if (verb == "convert" && args.size() == 3) return convert(args, out, err);
    if (verb == "residency" && (args.size() == 3 || (args.size() == 5 && args[3] == "--timeline")))
      return residency(args, out, err);
  } catch (const std::bad_alloc&) {
    fmt::print(err, "deepum: trace {}: out of memory\n", verb);
    return kTraceCommandFailed;
  } catch (const std::exception& e) {  // fmt's writes to a closed or full output
    fmt::print(err, "deepum: trace {}: {}\n", verb, e.what());
    return kTraceCommandFailed;
  }
  fmt::print(err, "{}", kTraceUsage);
  return kTraceCommandBadInput;
}

}  // namespace deepum::core
