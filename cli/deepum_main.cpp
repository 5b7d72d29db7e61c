// deepum: the command-line front end. `deepum run -- CMD` starts CMD with libdeepum.so preloaded
// and the configuration checked first; `deepum config` shows the effective configuration.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"
#include "deepum/config/render.hpp"
#include "deepum/core/perfetto_writer.hpp"
#include "deepum/core/residency_replay.hpp"
#include "deepum/core/trace_file.hpp"

namespace {

namespace fs = std::filesystem;
using deepum::config::ConfigLoad;

constexpr const char* kUsage =
    "usage:\n"
    "  deepum run [--config FILE] -- COMMAND [ARGS...]   run COMMAND with libdeepum.so preloaded\n"
    "  deepum config [--config FILE] [--json|--markdown] the configuration in effect, key by key, and\n"
    "                                                    where each value came from; --markdown: the\n"
    "                                                    keys table of docs/configuration.md\n"
    "  deepum trace check PREFIX                         verify PREFIX.dtrace and PREFIX.perfetto.json\n"
    "  deepum trace summary FILE.dtrace                  what a trace holds\n"
    "  deepum trace convert FILE.dtrace OUT.json         write a trace as Perfetto JSON\n"
    "  deepum trace residency FILE.dtrace LIMIT [--timeline MS]\n"
    "                                                    residency by the records in time order, against\n"
    "                                                    LIMIT (a size: 3840MiB, 3.75GiB, 123B); with\n"
    "                                                    --timeline, a CSV of every MS milliseconds\n"
    "  deepum --version\n"
    "\n"
    "Configuration: defaults, then the JSON file (--config or DEEPUM_CONFIG), then DEEPUM_<KEY>\n"
    "variables. The library is found through DEEPUM_LIBRARY or next to this program.\n";

fs::path own_directory() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return {};
  path[n] = '\0';
  return fs::path(path).parent_path();
}

std::string find_library() {
  if (const char* explicit_path = std::getenv("DEEPUM_LIBRARY")) return explicit_path;
  const fs::path here = own_directory();
  for (const fs::path& candidate :
       {here / "../lib/libdeepum.so", here / "libdeepum.so", here / "lib/libdeepum.so"}) {
    std::error_code ignored;
    if (fs::exists(candidate, ignored)) return fs::weakly_canonical(candidate, ignored).string();
  }
  return {};
}

ConfigLoad load_effective_config() {
  return deepum::config::load_process_config(deepum::config::this_process_environment());
}

// Applies --config FILE by exporting DEEPUM_CONFIG, so the library reads the same file.
bool take_config_option(std::vector<std::string>& args) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == "--config") {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "deepum: --config needs a file name\n");
        return false;
      }
      setenv("DEEPUM_CONFIG", args[i + 1].c_str(), 1);
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i),
                 args.begin() + static_cast<std::ptrdiff_t>(i + 2));
      --i;
    }
  }
  return true;
}

int show_config(const std::vector<std::string>& args) {
  const std::string form = args.empty() ? "" : args[0];
  if (args.size() > 1 || (form != "" && form != "--json" && form != "--markdown")) {
    std::fprintf(stderr, "deepum: config [--config FILE] [--json | --markdown]\n");
    return 2;
  }
  if (form == "--markdown") {
    std::fputs(deepum::config::keys_markdown_table().c_str(), stdout);
    return 0;
  }
  const ConfigLoad load = load_effective_config();
  if (form == "--json") {
    std::fputs(deepum::config::render_json(load).c_str(), stdout);
    return load.ok() ? 0 : 2;
  }
  if (!load.ok()) {
    std::fprintf(stderr, "%s\n", load.error.c_str());
    return 2;
  }
  std::fputs(deepum::config::render_text(load).c_str(), stdout);
  return 0;
}

int run(const std::vector<std::string>& args) {
  std::size_t separator = 0;
  while (separator < args.size() && args[separator] != "--") ++separator;
  const std::size_t first = separator < args.size() ? separator + 1 : 0;
  if (first >= args.size()) {
    std::fprintf(stderr, "deepum: run needs a command: deepum run -- COMMAND [ARGS...]\n");
    return 2;
  }
  // Refuse a bad configuration here, where the user can fix it, rather than inside the program.
  const ConfigLoad load = load_effective_config();
  if (!load.ok()) {
    std::fprintf(stderr, "%s\n", load.error.c_str());
    return 2;
  }
  const std::string library = find_library();
  if (library.empty()) {
    std::fprintf(stderr, "deepum: libdeepum.so not found next to %s; set DEEPUM_LIBRARY\n",
                 own_directory().string().c_str());
    return 2;
  }
  const char* existing = std::getenv("LD_PRELOAD");
  const std::string preload = existing && *existing ? library + ":" + existing : library;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  std::vector<char*> argv;
  for (std::size_t i = first; i < args.size(); ++i) argv.push_back(const_cast<char*>(args[i].c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  std::fprintf(stderr, "deepum: cannot run %s: %s\n", argv[0], std::strerror(errno));
  return 127;
}

std::string read_file(const std::string& path, std::string* error) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    *error = path + ": " + std::strerror(errno);
    return {};
  }
  std::string text;
  char chunk[1 << 16];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, file)) > 0;) text.append(chunk, n);
  std::fclose(file);
  return text;
}

int trace_command(const std::vector<std::string>& args) {
  using namespace deepum::core;
  const std::string verb = args.empty() ? "" : args[0];
  if ((verb == "check" || verb == "summary") && args.size() == 2) {
    const std::string compact = verb == "check" ? args[1] + ".dtrace" : args[1];
    const TraceReadResult result = read_trace(compact);
    if (!result) {
      std::fprintf(stderr, "%s\n", result.error.c_str());
      return 1;
    }
    std::printf("%s: valid\n%s", compact.c_str(), summarize(*result.trace).c_str());
    if (verb == "summary") return 0;
    const std::string json_path = args[1] + ".perfetto.json";
    std::string error;
    const std::string json = read_file(json_path, &error);
    if (error.empty()) error = validate_perfetto_json(json);
    if (!error.empty()) {
      std::fprintf(stderr, "%s: %s\n", json_path.c_str(), error.c_str());
      return 1;
    }
    std::printf("%s: valid Perfetto JSON (%zu bytes)\n", json_path.c_str(), json.size());
    return 0;
  }
  if (verb == "convert" && args.size() == 3) {
    const TraceReadResult result = read_trace(args[1]);
    std::string error = result ? std::string() : result.error;
    if (result && !write_perfetto_json(*result.trace, args[2], &error) && error.empty())
      error = "write failed";
    if (!error.empty()) {
      std::fprintf(stderr, "%s\n", error.c_str());
      return 1;
    }
    std::printf("wrote %s\n", args[2].c_str());
    return 0;
  }
  if (verb == "residency" && (args.size() == 3 || (args.size() == 5 && args[3] == "--timeline"))) {
    long interval_ms = 0;
    if (args.size() == 5) {
      char* end = nullptr;
      interval_ms = std::strtol(args[4].c_str(), &end, 10);
      if (end == args[4].c_str() || *end != '\0' || interval_ms <= 0 || interval_ms > 60'000) {
        std::fprintf(stderr, "deepum: trace residency: --timeline %s: give whole milliseconds, 1 to 60000\n",
                     args[4].c_str());
        return 2;
      }
    }
    std::string why;
    const std::optional<deepum::config::SizeSpec> limit = deepum::config::parse_size(args[2], &why);
    if (!limit || limit->is_percent()) {
      std::fprintf(
          stderr, "deepum: trace residency: LIMIT %s: %s\n", args[2].c_str(),
          limit ? "a percentage needs the GPU's size; give bytes or a size such as 3.75GiB" : why.c_str());
      return 2;
    }
    const TraceReadResult result = read_trace(args[1]);
    if (!result) {
      std::fprintf(stderr, "%s\n", result.error.c_str());
      return 1;
    }
    std::vector<ResidencyInterval> timeline;
    const Timestamp interval_ns = static_cast<Timestamp>(interval_ms) * 1'000'000;
    std::printf("%s",
                describe(replay_residency(*result.trace, limit->resolve(0), &timeline, interval_ns)).c_str());
    if (interval_ms != 0) {
      constexpr double kMiBytes = 1 << 20;
      std::printf("ms,resident_mib,estimated_mib,to_gpu_mib,to_host_mib,evictions_asked_mib\n");
      for (const ResidencyInterval& i : timeline) {
        std::printf(
            "%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n", static_cast<double>(i.start) / 1e6,
            static_cast<double>(i.resident_max) / kMiBytes, static_cast<double>(i.estimated_max) / kMiBytes,
            static_cast<double>(i.to_gpu_bytes) / kMiBytes, static_cast<double>(i.to_host_bytes) / kMiBytes,
            static_cast<double>(i.evictions_asked_bytes) / kMiBytes);
      }
    }
    return 0;
  }
  std::fprintf(
      stderr,
      "deepum: trace check PREFIX | trace summary FILE | trace convert FILE OUT | trace residency FILE "
      "LIMIT [--timeline MS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version") {
    std::printf("deepum %s\n", DEEPUM_VERSION);
    return 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  if (!take_config_option(args)) return 2;
  if (command == "run") return run(args);
  if (command == "config") return show_config(args);
  if (command == "trace") return trace_command(args);
  std::fprintf(stderr, "deepum: unknown command \"%s\"\n\n%s", command.c_str(), kUsage);
  return 2;
}
