// The loader-lock stress test. One thread loads and unloads a library in a loop while others look
// up symbols in the loaded libraries as deepum does on the program's first CUDA runtime calls
// (core::find_loaded_symbol). If a lookup called the loader inside dl_iterate_phdr, glibc's two
// loader locks would be taken in opposite orders by the two threads and both would stop for good;
// a watchdog turns that into a failure within seconds instead of a hung test.
//
//   deepum_loader_lock_stress MODULE [--seconds S] [--inside-walk]
//
// --inside-walk looks up the way deepum once did (dlopen inside the walk), to show that this
// harness catches the inversion: it is expected to report a hang.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "deepum/core/loaded_objects.hpp"

namespace {

constexpr int kLookupThreads = 2;
constexpr auto kJoinGrace = std::chrono::seconds(10);  // far beyond one round of any loop below

struct Counters {
  std::atomic<bool> go{false};  // every thread exists before any touches the loader
  std::atomic<bool> stop{false};
  std::atomic<int> finished{0};
  std::atomic<std::uint64_t> cycles{0};
  std::atomic<std::uint64_t> lookups{0};
  std::atomic<std::uint64_t> misses{0};
};

// The lookup as deepum did it before: dlopen from inside the dl_iterate_phdr callback.
struct InsideWalkSearch {
  const char* fragment;
  const char* symbol;
  void* found;
};
int search_inside_walk(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<InsideWalkSearch*>(data);
  if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, search->fragment) == nullptr) return 0;
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  search->found = dlsym(handle, search->symbol);
  dlclose(handle);
  return search->found != nullptr ? 1 : 0;
}
void* lookup_inside_walk(const char* fragment, const char* symbol) {
  InsideWalkSearch search{fragment, symbol, nullptr};
  dl_iterate_phdr(search_inside_walk, &search);
  return search.found;
}

void wait_for_go(const Counters& counters) {
  while (!counters.go.load()) std::this_thread::yield();
}

void cycle_module(const char* module, Counters& counters) {
  wait_for_go(counters);
  while (!counters.stop.load(std::memory_order_relaxed)) {
    void* handle = dlopen(module, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      std::fprintf(stderr, "cannot load %s: %s\n", module, dlerror());
      std::_Exit(2);
    }
    dlclose(handle);
    counters.cycles.fetch_add(1, std::memory_order_relaxed);
  }
  counters.finished.fetch_add(1);
}

void look_up(bool inside_walk, Counters& counters) {
  auto find = [inside_walk](const char* fragment, const char* symbol) {
    return inside_walk ? lookup_inside_walk(fragment, symbol)
                       : deepum::core::find_loaded_symbol(fragment, symbol, &dlsym);
  };
  wait_for_go(counters);
  while (!counters.stop.load(std::memory_order_relaxed)) {
    // libc is always loaded and found at once; the cycled module only while it is loaded.
    if (find("libc.so", "malloc") == nullptr) counters.misses.fetch_add(1, std::memory_order_relaxed);
    find("cycled_module", "deepum_cycled_module_marker");
    counters.lookups.fetch_add(1, std::memory_order_relaxed);
  }
  counters.finished.fetch_add(1);
}

void report_hang_from_signal(int) {
  static const char kMessage[] = "HUNG: the watchdog's alarm fired (the main thread was blocked too)\n";
  [[maybe_unused]] const ssize_t written = write(STDOUT_FILENO, kMessage, sizeof kMessage - 1);
  _exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODULE [--seconds S] [--inside-walk]\n", argv[0]);
    return 2;
  }
  const char* module = argv[1];
  double seconds = 2.0;
  bool inside_walk = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--inside-walk") == 0) {
      inside_walk = true;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }

  if (!(seconds > 0 && seconds <= 600)) {
    std::fprintf(stderr, "--seconds must be in (0, 600]\n");
    return 2;
  }

  Counters counters;
  std::vector<std::thread> threads;
  threads.emplace_back(cycle_module, module, std::ref(counters));
  for (int i = 0; i < kLookupThreads; ++i) threads.emplace_back(look_up, inside_walk, std::ref(counters));
  // The backstop: should the main thread itself ever block, the kernel still ends the run.
  std::signal(SIGALRM, report_hang_from_signal);
  alarm(static_cast<unsigned>(seconds) + 2 * static_cast<unsigned>(kJoinGrace.count()));
  counters.go.store(true);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  counters.stop.store(true);

  const int expected = kLookupThreads + 1;
  const auto deadline = std::chrono::steady_clock::now() + kJoinGrace;
  while (counters.finished.load() < expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto cycles = counters.cycles.load(), lookups = counters.lookups.load();
  if (counters.finished.load() < expected) {
    std::printf(
        "HUNG: %d of %d threads still inside the loader %lld s after being told to stop "
        "(%llu load/unload cycles, %llu lookups before that)\n",
        expected - counters.finished.load(), expected, static_cast<long long>(kJoinGrace.count()),
        static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(lookups));
    std::fflush(stdout);
    std::_Exit(1);  // the hung threads cannot be joined
  }
  for (auto& thread : threads) thread.join();
  std::printf("%llu load/unload cycles, %llu lookups in %.1f s, no hang\n",
              static_cast<unsigned long long>(cycles), static_cast<unsigned long long>(lookups), seconds);
  if (counters.misses.load() != 0) {
    std::printf("FAIL: libc's malloc not found %llu times\n",
                static_cast<unsigned long long>(counters.misses.load()));
    return 1;
  }
  if (cycles == 0 || lookups == 0) {
    std::printf("FAIL: a thread made no progress\n");
    return 1;
  }
  return 0;
}
