// deepum: the command-line front end. `deepum run -- CMD` starts CMD with libdeepum.so preloaded
// and the configuration checked first; `deepum config` shows the effective configuration.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"
#include "deepum/config/render.hpp"
#include "deepum/core/trace_commands.hpp"

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

int deepum_main(int argc, char** argv) {
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
  if (command == "trace") return deepum::core::run_trace_command(args, stdout, stderr);
  std::fprintf(stderr, "deepum: unknown command \"%s\"\n\n%s", command.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // Whatever escapes a command ends in a message and a status, never in std::terminate.
  try {
    return deepum_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "deepum: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "deepum: an unexpected error\n");
  }
  return 1;
}
