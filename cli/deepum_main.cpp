// deepum: the command-line front end. `deepum run -- CMD` starts CMD with libdeepum.so preloaded
// and the configuration checked first; `deepum config` shows the effective configuration;
// `deepum trace ...` reads trace files; `deepum report RUN` writes an HTML page of a run. Arguments are
// parsed by CLI11: every subcommand has --help, and an unknown option is an error (exit 2), never silently
// dropped.
#include <limits.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"
#include "deepum/config/render.hpp"
#include "deepum/core/run_report.hpp"
#include "deepum/core/trace_commands.hpp"

namespace {

namespace fs = std::filesystem;
using deepum::config::ConfigLoad;

constexpr int kExitUsage = 2;
constexpr int kExitCannotRun = 127;

fs::path own_directory() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  path[static_cast<std::size_t>(n)] = '\0';
  return fs::path(path).parent_path();
}

// Why `path` cannot be the library, or nothing. A wrong path must stop the run: the program would
// otherwise run without deepum and succeed as if it had been there.
std::optional<std::string> library_problem(const fs::path& path) {
  std::error_code error;
  if (!fs::is_regular_file(path, error)) return "no such file";
  std::ifstream file(path, std::ios::binary);
  std::array<char, 4> magic{};
  if (!file.read(magic.data(), magic.size()) || magic != std::array<char, 4>{'\x7f', 'E', 'L', 'F'})
    return "not a shared library (no ELF header)";
  return std::nullopt;
}

// The library's path, or an error message. DEEPUM_LIBRARY wins (empty counts as unset); else the
// library installed with this program: ../lib (build tree, cmake --install, pip) or next to it.
std::optional<std::string> find_library(std::string* error) {
  if (const char* explicit_path = std::getenv("DEEPUM_LIBRARY"); explicit_path && *explicit_path) {
    if (const std::optional<std::string> problem = library_problem(explicit_path)) {
      *error = std::string("DEEPUM_LIBRARY=") + explicit_path + ": " + *problem;
      return std::nullopt;
    }
    std::error_code ignored;  // absolute: the program may change its directory before it loads
    return fs::absolute(explicit_path, ignored).string();
  }
  const fs::path here = own_directory();
  for (const fs::path& candidate : {here / "../lib/libdeepum.so", here / "libdeepum.so"}) {
    std::error_code ignored;
    if (!library_problem(candidate)) return fs::weakly_canonical(candidate, ignored).string();
  }
  *error = "libdeepum.so not found in " + (here / "../lib").lexically_normal().string() + " or " +
           here.string() + "; set DEEPUM_LIBRARY to its path";
  return std::nullopt;
}

ConfigLoad load_effective_config() {
  return deepum::config::load_process_config(deepum::config::this_process_environment());
}

// --config FILE reaches the library as DEEPUM_CONFIG, so both read the same file.
void export_config_file(const std::string& file) {
  if (!file.empty()) setenv("DEEPUM_CONFIG", file.c_str(), 1);
}

// form: "" (a table that fits a terminal), "json", or "markdown" (the keys tables of the docs: the
// keys, then the deprecated keys).
int show_config(const std::string& form) {
  if (form == "markdown") {
    std::fputs(deepum::config::keys_markdown_table().c_str(), stdout);
    std::fputs("\n", stdout);
    std::fputs(deepum::config::deprecated_keys_markdown_table().c_str(), stdout);
    return 0;
  }
  const ConfigLoad load = load_effective_config();
  if (form == "json") {
    std::fputs(deepum::config::render_json(load).c_str(), stdout);
    return load.ok() ? 0 : kExitUsage;
  }
  if (!load.ok()) {
    std::fprintf(stderr, "%s\n", load.error.c_str());
    return kExitUsage;
  }
  std::fputs(deepum::config::render_text(load).c_str(), stdout);
  return 0;
}

int run(std::vector<std::string> command) {
  if (command.empty()) {
    std::fprintf(stderr, "deepum run: no command given: deepum run [--config FILE] -- COMMAND [ARGS...]\n");
    return kExitUsage;
  }
  // Refuse a bad configuration here, where the user can fix it, rather than inside the program.
  const ConfigLoad load = load_effective_config();
  if (!load.ok()) {
    std::fprintf(stderr, "%s\n", load.error.c_str());
    return kExitUsage;
  }
  std::string error;
  const std::optional<std::string> library = find_library(&error);
  if (!library) {
    std::fprintf(stderr, "deepum run: %s\n", error.c_str());
    return kExitUsage;
  }
  const char* existing = std::getenv("LD_PRELOAD");
  const std::string preload = existing && *existing ? *library + ":" + existing : *library;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<char*> argv;
  for (std::string& arg : command) argv.push_back(arg.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "deepum run: cannot run %s: %s\n", argv[0], std::strerror(errno));
  return kExitCannotRun;
}

struct Request {
  std::string config_file;
  bool json = false, markdown = false;  // deepum config
  std::string trace, prefix, out, limit;
  deepum::core::ReportRequest report;
  long timeline_ms = 0;
  std::vector<std::string> after_separator;  // what followed "deepum run ... --"
  bool has_separator = false;
};

// The program `deepum run` starts. CLI11 stops at the program's name (prefix_command) and leaves it
// and its arguments; "--" ends our options explicitly (main splits there, since CLI11 would end
// the subcommand at it). What is left before "--" is the program's start, or an unknown option.
std::optional<std::vector<std::string>> run_command(const CLI::App& run_app, const Request& request) {
  std::vector<std::string> command = run_app.remaining();
  if (!command.empty() && command.front().starts_with("-")) {
    std::fprintf(stderr, "deepum run: unknown option %s (deepum run --help lists the options)\n",
                 command.front().c_str());
    return std::nullopt;
  }
  if (request.has_separator) {
    // After the program's name, "--" is the program's own: deepum run python -m x -- --y.
    if (!command.empty()) command.push_back("--");
    command.insert(command.end(), request.after_separator.begin(), request.after_separator.end());
  }
  return command;
}

int dispatch(const CLI::App& app, const Request& request) {
  if (const CLI::App* run_app = app.get_subcommand("run"); run_app->parsed()) {
    std::optional<std::vector<std::string>> command = run_command(*run_app, request);
    if (!command) return kExitUsage;
    export_config_file(request.config_file);
    return run(std::move(*command));
  }
  if (app.get_subcommand("config")->parsed()) {
    export_config_file(request.config_file);
    return show_config(request.json ? "json" : request.markdown ? "markdown" : "");
  }
  if (app.get_subcommand("report")->parsed())
    return deepum::core::run_report_command(request.report, stdout, stderr);
  // The trace commands themselves live in core (deepum::core::run_trace_command), where they are
  // tested without CUDA.
  const CLI::App* trace = app.get_subcommand("trace");
  std::vector<std::string> trace_args;
  if (trace->get_subcommand("check")->parsed()) trace_args = {"check", request.prefix};
  if (trace->get_subcommand("summary")->parsed()) trace_args = {"summary", request.trace};
  if (trace->get_subcommand("convert")->parsed()) trace_args = {"convert", request.trace, request.out};
  if (trace->get_subcommand("residency")->parsed()) {
    trace_args = {"residency", request.trace, request.limit};
    if (request.timeline_ms != 0)
      trace_args.insert(trace_args.end(), {"--timeline", std::to_string(request.timeline_ms)});
  }
  if (!trace_args.empty()) return deepum::core::run_trace_command(trace_args, stdout, stderr);
  std::fputs(app.help().c_str(), stderr);  // options alone, no command
  return kExitUsage;
}

void add_trace_commands(CLI::App& app, Request& request) {
  CLI::App* trace = app.add_subcommand("trace", "read, check and convert deepum's trace files");
  trace->require_subcommand(1);
  CLI::App* check = trace->add_subcommand("check", "verify PREFIX.dtrace and PREFIX.perfetto.json");
  check->add_option("PREFIX", request.prefix, "the trace_file setting of the traced run")->required();
  CLI::App* summary = trace->add_subcommand("summary", "what a trace holds");
  summary->add_option("FILE", request.trace, "a .dtrace file")->required();
  CLI::App* convert = trace->add_subcommand("convert", "write a trace as Perfetto JSON (ui.perfetto.dev)");
  convert->add_option("FILE", request.trace, "a .dtrace file")->required();
  convert->add_option("OUT", request.out, "the JSON file to write")->required();
  CLI::App* residency =
      trace->add_subcommand("residency", "residency by the trace's records in time order, against LIMIT");
  residency->add_option("FILE", request.trace, "a .dtrace file")->required();
  residency->add_option("LIMIT", request.limit, "bytes or a size: 3840MiB, 3.75GiB")->required();
  residency->add_option("--timeline", request.timeline_ms, "also a CSV of every MS milliseconds")
      ->type_name("MS")
      ->check(CLI::Range(1L, 60'000L));
}

void add_report_command(CLI::App& app, Request& request) {
  CLI::App* report =
      app.add_subcommand("report", "write one HTML page with plots of a run (no network needed to view it)");
  report
      ->add_option("RUN", request.report.run,
                   "the run's directory (its .dtrace and statistics .json), its .dtrace file or trace_file "
                   "prefix, or its statistics .json")
      ->required();
  report
      ->add_option("--stats", request.report.stats,
                   "the statistics file (stats_file), where RUN does not hold it")
      ->type_name("FILE");
  report->add_option("-o,--out", request.report.out, "the page to write (default: next to RUN)")
      ->type_name("FILE");
  report->footer(
      "example: DEEPUM_TRACE_FILE=run/trace DEEPUM_STATS_FILE=run/stats.json deepum run -- python train.py\n"
      "         deepum report run/     (writes run/deepum-report.html)");
}

void add_commands(CLI::App& app, Request& request) {
  app.set_version_flag("--version", std::string("deepum ") + DEEPUM_VERSION);
  app.require_subcommand(0, 1);

  CLI::App* run_app = app.add_subcommand("run", "run a program with libdeepum.so preloaded");
  run_app->add_option("--config", request.config_file, "settings from this JSON file (sets DEEPUM_CONFIG)")
      ->type_name("FILE");
  run_app->prefix_command();  // the program's name ends deepum's options; the rest is the program's
  run_app->footer(
      "usage: deepum run [--config FILE] [--] COMMAND [ARGS...]\n"
      "example: DEEPUM_RESIDENT_LIMIT=40GiB deepum run -- python train.py\n"
      "The program's exit status is deepum's.");

  CLI::App* config = app.add_subcommand("config", "show the effective configuration and every key");
  config->add_option("--config", request.config_file, "settings from this JSON file")->type_name("FILE");
  CLI::Option* json =
      config->add_flag("--json", request.json, "each key's value, default and origin as JSON");
  config->add_flag("--markdown", request.markdown, "the keys table of docs/configuration.md")->excludes(json);

  add_trace_commands(app, request);
  add_report_command(app, request);
  // After the subcommands: CLI11 copies the footer into those added later.
  app.footer(
      "Configuration: defaults, then the JSON file (--config or DEEPUM_CONFIG), then DEEPUM_<KEY>\n"
      "variables. The library is found through DEEPUM_LIBRARY or next to this program.\n"
      "deepum COMMAND --help tells more of each command.");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("deepum: unmodified CUDA programs with more GPU memory than the card has", "deepum");
  Request request;
  add_commands(app, request);
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    return kExitUsage;
  }
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.front() == "run") {
    const auto separator = std::find(args.begin(), args.end(), "--");
    if (separator != args.end()) {
      request.has_separator = true;
      request.after_separator.assign(separator + 1, args.end());
      args.erase(separator, args.end());
    }
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes its arguments last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
      return app.exit(e);  // --help, --version
    std::fprintf(stderr,
                 "deepum: %s\n(deepum --help lists the commands, deepum COMMAND --help their options)\n",
                 e.what());
    return kExitUsage;
  }
  try {
    return dispatch(app, request);
  } catch (const std::exception& e) {  // never an abort: say what went wrong
    std::fprintf(stderr, "deepum: %s\n", e.what());
    return 1;
  }
}
