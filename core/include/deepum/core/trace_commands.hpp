// `deepum trace ...`: checking, summarizing, converting and replaying trace files, as one function
// the command-line tool calls and the tests drive. Every problem with the files given ends in one
// message on `err` naming the file and the problem, never an abort.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace deepum::core {

// Exit statuses of the trace commands.
inline constexpr int kTraceCommandDone = 0;
inline constexpr int kTraceCommandFailed = 1;    // the output could not be written, or memory ran out
inline constexpr int kTraceCommandBadInput = 2;  // usage, or a file that is missing, damaged or not a trace

// The most JSON `trace check` reads into memory (its document takes several times that).
inline constexpr std::uint64_t kMaxPerfettoJsonBytes = std::uint64_t{2} << 30;

// args: what follows `deepum trace` ("check PREFIX", "summary FILE", "convert FILE OUT",
// "residency FILE LIMIT [--timeline MS]"). Results go to `out`, messages to `err`.
int run_trace_command(std::span<const std::string> args, std::FILE* out, std::FILE* err);

}  // namespace deepum::core
