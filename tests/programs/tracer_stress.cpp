// tracer_stress: many threads load a module of 128 distinct kernels (half the threads as a
// CUmodule, half as a CUlibrary, as cudart does), launch each once (a first launch: the tracer has
// no parameter layout for it yet), check a result, and unload it (every layout becomes stale),
// over and over. The run alternates between quiet stretches, where
// nothing faults (a tracer may pause its kernel records then), and stretches where every round
// faults fresh managed memory in (records resume). CUPTI flushes its records all the while. A
// watchdog ends the program with exit code 3 when no thread makes progress for --watchdog seconds:
// a deadlock between deepum, CUPTI and the driver shows up as that, not as a hung test.
//
// A third of the threads instead dlopen a shared library of the same kernels built with the CUDA
// runtime (--runtime-lib; each thread its own copy, so every dlclose unloads it) and launch them
// through cudart, lazily loaded at their first launch, as PyTorch's kernels are.
//
// --old-callback-pattern 1 (with no deepum loaded) subscribes the program itself to CUPTI the way
// deepum did before its lock discipline (tests/programs/old_callback_pattern.cpp): the same load
// must then hang, which shows it can find that deadlock on the driver in use. 2 runs only the launch
// callback's layout queries, 3 only the record pauses and flushes: which part it takes.
//
// tracer_stress FATBIN [--runtime-lib SO] [--threads N] [--seconds S] [--watchdog S]
//                      [--old-callback-pattern 1|2|3]
#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "old_callback_pattern.hpp"

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kKernelsPerLayout = 32;
constexpr int kElements = 1 << 16;
constexpr auto kPhase = std::chrono::milliseconds(1300);  // quiet, then faulting, then quiet...

struct Options {
  std::string fatbin;
  std::string runtime_lib;
  int threads = 16;
  double seconds = 8;
  double watchdog = 30;
  int old_callback_pattern = 0;  // 0: none; else an OldPatternParts
};

struct Pair {
  float* out;
  const float* in;
};

std::atomic<std::uint64_t> g_rounds{0};
std::atomic<int> g_failures{0};
std::atomic<bool> g_stop{false};

void fail(const char* what, CUresult r) {
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::printf("FAIL: %s: %s (%d)\n", what, name != nullptr ? name : "?", static_cast<int>(r));
  g_failures.fetch_add(1);
  g_stop.store(true);
}

#define STRESS_CHECK(call)      \
  do {                          \
    const CUresult r_ = (call); \
    if (r_ != CUDA_SUCCESS) {   \
      fail(#call, r_);          \
      return false;             \
    }                           \
  } while (0)

// The quiet stretches come first, so a tracer that pauses its records after a second without
// faults does so while first launches run.
bool faulting_phase(Clock::time_point start) { return ((Clock::now() - start) / kPhase) % 2 == 1; }

// A module (cuModuleLoadData, CUfunction handles) or a library (cuLibraryLoadData, CUkernel
// handles cast to CUfunction, as cudart launches them): the tracer learns the two kinds of handle
// through different driver calls.
class Kernels {
 public:
  Kernels(const std::vector<char>& image, bool library) : library_(library) {
    loaded_ =
        library ? cuLibraryLoadData(&library_handle_, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0)
                : cuModuleLoadData(&module_, image.data());
  }
  CUresult loaded() const { return loaded_; }
  CUresult get(CUfunction* function, const std::string& name) const {
    if (!library_) return cuModuleGetFunction(function, module_, name.c_str());
    CUkernel kernel = nullptr;
    const CUresult r = cuLibraryGetKernel(&kernel, library_handle_, name.c_str());
    *function = reinterpret_cast<CUfunction>(kernel);
    return r;
  }
  CUresult unload() { return library_ ? cuLibraryUnload(library_handle_) : cuModuleUnload(module_); }

 private:
  bool library_;
  CUmodule module_ = nullptr;
  CUlibrary library_handle_ = nullptr;
  CUresult loaded_ = CUDA_ERROR_NOT_INITIALIZED;
};

// One round: load, launch every kernel once, check one result, unload.
bool round(const std::vector<char>& image, bool library, CUstream stream, CUdeviceptr in, CUdeviceptr out,
           bool fresh_memory, int seed) {
  Kernels module(image, library);
  STRESS_CHECK(module.loaded());
  // Allocated and freed every round but never touched: allocations go on in the quiet stretches
  // too, as a training step's allocator grows without faulting.
  CUdeviceptr scratch = 0;
  STRESS_CHECK(cuMemAlloc(&scratch, std::size_t{4} << 20));
  CUdeviceptr target = out;
  if (fresh_memory) STRESS_CHECK(cuMemAlloc(&target, kElements * sizeof(float)));  // faults on first touch
  const unsigned grid = (kElements + 255) / 256;
  int n = kElements;
  float scale = 1.0f;
  auto* out_ptr = reinterpret_cast<float*>(target);
  auto* in_ptr = reinterpret_cast<const float*>(in);
  Pair pair{out_ptr, in_ptr};
  char a = 1, f = 2;
  short b = 3;
  int c = 4;
  long long d = 5;
  double e = 6;
  for (int i = 0; i < kKernelsPerLayout; ++i) {
    const int k = (i + seed) % kKernelsPerLayout;  // threads reach the same functions in different orders
    const std::string suffix = std::to_string(k);
    CUfunction fa = nullptr, fb = nullptr, fc = nullptr, fd = nullptr;
    STRESS_CHECK(module.get(&fa, "stress_a" + suffix));
    STRESS_CHECK(module.get(&fb, "stress_b" + suffix));
    STRESS_CHECK(module.get(&fc, "stress_c" + suffix));
    STRESS_CHECK(module.get(&fd, "stress_d" + suffix));
    void* args_d[] = {&a, &b, &c, &d, &out_ptr, &e, &n, &f};
    void* args_b[] = {&n, &scale, &out_ptr};
    void* args_c[] = {&pair, &n};
    void* args_a[] = {&out_ptr, &in_ptr, &n};
    STRESS_CHECK(cuLaunchKernel(fd, grid, 1, 1, 256, 1, 1, 0, stream, args_d, nullptr));
    STRESS_CHECK(cuLaunchKernel(fb, grid, 1, 1, 256, 1, 1, 0, stream, args_b, nullptr));
    STRESS_CHECK(cuLaunchKernel(fc, grid, 1, 1, 256, 1, 1, 0, stream, args_c, nullptr));
    STRESS_CHECK(cuLaunchKernel(fa, grid, 1, 1, 256, 1, 1, 0, stream, args_a, nullptr));
  }
  // The last kernel run was stress_a(k_last): out = in + k_last.
  const int last = (kKernelsPerLayout - 1 + seed) % kKernelsPerLayout;
  float value = 0;
  STRESS_CHECK(cuMemcpyDtoHAsync(&value, target + sizeof(float) * 77, sizeof(float), stream));
  STRESS_CHECK(cuStreamSynchronize(stream));
  const float expected = 0.5f * 77 + static_cast<float>(last);
  if (value != expected) {
    std::printf("FAIL: stress_a%d wrote %g, expected %g\n", last, static_cast<double>(value),
                static_cast<double>(expected));
    g_failures.fetch_add(1);
    g_stop.store(true);
    return false;
  }
  if (fresh_memory) STRESS_CHECK(cuMemFree(target));
  STRESS_CHECK(cuMemFree(scratch));
  STRESS_CHECK(module.unload());
  return true;
}

using LaunchAll = int (*)(CUstream, float*, const float*, int, int);

// One round through the runtime library: load it, launch its kernels, check, unload it.
bool runtime_round(const std::string& copy, CUstream stream, CUdeviceptr in, CUdeviceptr out,
                   bool fresh_memory, int seed) {
  CUdeviceptr scratch = 0;  // as in round()
  STRESS_CHECK(cuMemAlloc(&scratch, std::size_t{4} << 20));
  void* library = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  auto launch_all =
      library != nullptr ? reinterpret_cast<LaunchAll>(dlsym(library, "stress_launch_all")) : nullptr;
  if (launch_all == nullptr) {
    std::printf("FAIL: cannot load %s: %s\n", copy.c_str(), dlerror());
    g_failures.fetch_add(1);
    g_stop.store(true);
    return false;
  }
  CUdeviceptr target = out;
  if (fresh_memory) STRESS_CHECK(cuMemAlloc(&target, kElements * sizeof(float)));
  const int launched = launch_all(stream, reinterpret_cast<float*>(target),
                                  reinterpret_cast<const float*>(in), kElements, seed);
  if (launched != 0) {
    std::printf("FAIL: stress_launch_all: cuda error %d\n", launched);
    g_failures.fetch_add(1);
    g_stop.store(true);
    return false;
  }
  float value = 0;
  STRESS_CHECK(cuMemcpyDtoHAsync(&value, target + sizeof(float) * 77, sizeof(float), stream));
  STRESS_CHECK(cuStreamSynchronize(stream));
  if (value != 0.5f * 77 + 31) {
    std::printf("FAIL: the runtime library's kernels wrote %g, expected %g\n", static_cast<double>(value),
                0.5 * 77 + 31);
    g_failures.fetch_add(1);
    g_stop.store(true);
    return false;
  }
  if (fresh_memory) STRESS_CHECK(cuMemFree(target));
  STRESS_CHECK(cuMemFree(scratch));
  dlclose(library);
  return true;
}

// This thread's own copy of the runtime library: dlopen of a shared path would only count up.
std::string private_copy(const std::string& path, int index) {
  const std::string copy =
      "/tmp/tracer_stress_" + std::to_string(getpid()) + "_" + std::to_string(index) + ".so";
  std::FILE* from = std::fopen(path.c_str(), "rb");
  std::FILE* to = std::fopen(copy.c_str(), "wb");
  bool ok = from != nullptr && to != nullptr;
  char buffer[1 << 16];
  for (std::size_t n = 0; ok && (n = std::fread(buffer, 1, sizeof buffer, from)) != 0;)
    ok = std::fwrite(buffer, 1, n, to) == n;
  if (from != nullptr) std::fclose(from);
  if (to != nullptr) ok = std::fclose(to) == 0 && ok;
  return ok ? copy : std::string();
}

bool worker(const std::vector<char>& image, const Options& options, CUcontext context, int index,
            Clock::time_point start, Clock::time_point end) {
  STRESS_CHECK(cuCtxSetCurrent(context));
  CUstream stream = nullptr;
  STRESS_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  CUdeviceptr in = 0, out = 0;
  STRESS_CHECK(cuMemAlloc(&in, kElements * sizeof(float)));
  STRESS_CHECK(cuMemAlloc(&out, kElements * sizeof(float)));
  std::vector<float> host(kElements);
  for (int i = 0; i < kElements; ++i) host[static_cast<std::size_t>(i)] = 0.5f * static_cast<float>(i);
  STRESS_CHECK(cuMemcpyHtoD(in, host.data(), host.size() * sizeof(float)));
  STRESS_CHECK(cuMemsetD32(out, 0, kElements));
  STRESS_CHECK(cuCtxSynchronize());
  const int mode = options.runtime_lib.empty() ? index % 2 : index % 3;  // module, library, runtime
  const std::string copy = mode == 2 ? private_copy(options.runtime_lib, index) : std::string();
  if (mode == 2 && copy.empty()) {
    std::printf("FAIL: cannot copy %s to /tmp\n", options.runtime_lib.c_str());
    g_failures.fetch_add(1);
    g_stop.store(true);
    return false;
  }
  for (int seed = index; Clock::now() < end && !g_stop.load(); seed += 7) {
    const bool fresh = faulting_phase(start);
    if (!(mode == 2 ? runtime_round(copy, stream, in, out, fresh, seed)
                    : round(image, mode == 1, stream, in, out, fresh, seed)))
      return false;
    g_rounds.fetch_add(1);
  }
  if (!copy.empty()) std::remove(copy.c_str());
  STRESS_CHECK(cuMemFree(in));
  STRESS_CHECK(cuMemFree(out));
  STRESS_CHECK(cuStreamDestroy(stream));
  return true;
}

// Exits the process (code 3) when no round finishes for `seconds`.
void watchdog(double seconds) {
  std::uint64_t last = 0;
  auto since = Clock::now();
  while (!g_stop.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::uint64_t now = g_rounds.load();
    if (now != last) {
      last = now;
      since = Clock::now();
    } else if (Clock::now() - since > std::chrono::duration<double>(seconds)) {
      std::printf("FAIL: watchdog: no round finished for %.0f s after %llu rounds: deadlock\n", seconds,
                  static_cast<unsigned long long>(now));
      std::fflush(stdout);
      _exit(3);
    }
  }
}

bool parse(int argc, char** argv, Options& options) {
  if (argc < 2) return false;
  options.fatbin = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const double value = std::atof(argv[i + 1]);
    if (flag == "--runtime-lib") {
      options.runtime_lib = argv[i + 1];
      continue;
    }
    if (flag == "--threads") {
      options.threads = static_cast<int>(value);
    } else if (flag == "--seconds") {
      options.seconds = value;
    } else if (flag == "--watchdog") {
      options.watchdog = value;
    } else if (flag == "--old-callback-pattern") {
      options.old_callback_pattern = static_cast<int>(value);
    } else {
      return false;
    }
  }
  return options.threads > 0 && options.seconds > 0 && options.watchdog > 0 &&
         options.old_callback_pattern >= 0 && options.old_callback_pattern <= 3;
}

std::vector<char> read_file(const std::string& path) {
  std::vector<char> bytes;
  if (std::FILE* file = std::fopen(path.c_str(), "rb")) {
    char buffer[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, file)) != 0)
      bytes.insert(bytes.end(), buffer, buffer + n);
    std::fclose(file);
  }
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::printf(
        "usage: %s FATBIN [--runtime-lib SO] [--threads N] [--seconds S] [--watchdog S] "
        "[--old-callback-pattern 1|2|3]\n",
        argv[0]);
    return 2;
  }
  const std::vector<char> image = read_file(options.fatbin);
  if (image.empty()) {
    std::printf("FAIL: cannot read %s\n", options.fatbin.c_str());
    return 1;
  }
  int devices = 0;
  if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&devices) != CUDA_SUCCESS || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (cuDeviceGet(&device, 0) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&context, device) != CUDA_SUCCESS) {
    std::printf("FAIL: no primary context\n");
    return 1;
  }
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.seconds));
  std::thread guard(watchdog, options.watchdog);
  std::vector<std::thread> threads;
  std::vector<std::thread> old_pattern;
  if (options.old_callback_pattern != 0) {
    const auto parts = static_cast<OldPatternParts>(options.old_callback_pattern);
    if (const std::string error = start_old_callback_pattern(parts, g_stop, old_pattern); !error.empty()) {
      std::printf("FAIL: --old-callback-pattern: %s\n", error.c_str());
      _exit(1);
    }
  }
  for (int i = 0; i < options.threads; ++i)
    threads.emplace_back([&, i] { worker(image, options, context, i, start, end); });
  for (std::thread& thread : threads) thread.join();
  g_stop.store(true);
  guard.join();
  for (std::thread& thread : old_pattern) thread.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("%llu rounds (%d threads, %d launches each) in %.1f s, %d failures\n",
              static_cast<unsigned long long>(g_rounds.load()), options.threads, 4 * kKernelsPerLayout,
              elapsed, g_failures.load());
  cuDevicePrimaryCtxRelease(device);
  if (g_failures.load() != 0) return 1;
  std::printf("PASS tracer_stress\n");
  return 0;
}
