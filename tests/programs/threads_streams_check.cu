// threads_streams_check: several host threads launch kernels at once, all on the legacy default
// stream or each on its own per-thread default stream, over more memory than the (emulated) GPU
// holds, and every value is checked at the end. Under deepum with swapping, it tests that a move
// decided in one thread is ordered after another thread's launches of the same memory: those
// already enqueued in a shared stream, those still inside their driver call, and those in
// another thread's per-thread stream, which the same driver handle names in every thread.
//
//   threads_streams_check [--threads T] [--arrays A] [--mib M] [--steps N] [--stream legacy|per-thread]
//                         [--copy-2d]
//
// Each thread owns A arrays; each step it advances each array once, in place, with exact integer
// arithmetic whose result depends on the order of the steps (a copy out or in at the wrong time
// shows). With --copy-2d each array has a twin: a step copies the array into it with
// cudaMemcpy2DAsync (a copy deepum does not decode: it may reach any memory), advances the twin,
// and the two trade places. Exit status: 0 every value right, 1 a mismatch or a CUDA error, 2 usage.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr std::uint32_t kMultiplier = 1664525u;

__host__ __device__ std::uint32_t increment(std::uint32_t step, std::uint32_t thread, std::uint32_t array) {
  return 1013904223u + step * 131u + thread * 7919u + array * 104729u;
}

__host__ __device__ std::uint32_t initial(std::size_t i, std::uint32_t thread, std::uint32_t array) {
  return static_cast<std::uint32_t>(i * 2654435761u) ^ (thread << 20) ^ (array << 12);
}

__global__ void fill(std::uint32_t* data, std::size_t n, std::uint32_t thread, std::uint32_t array) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = initial(i, thread, array);
}

__global__ void advance(std::uint32_t* data, std::size_t n, std::uint32_t add) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = data[i] * kMultiplier + add;
}

struct Options {
  unsigned threads = 8, arrays = 4, steps = 100;
  std::size_t mib = 16;
  bool per_thread = false;
  bool copy_2d = false;
};

constexpr std::size_t kPitch = 4096;  // the 2-D copies' row, in bytes

// The thread's work; returns an empty string, or what failed. `arrays` ends with the results
// first, then the twins (--copy-2d).
std::string run_thread(const Options& options, unsigned thread, std::vector<std::uint32_t*>& arrays) {
  const cudaStream_t stream = options.per_thread ? cudaStreamPerThread : cudaStreamLegacy;
  const std::size_t bytes = options.mib * (std::size_t{1} << 20);
  const std::size_t n = bytes / sizeof(std::uint32_t);
  for (std::uint32_t*& array : arrays) {
    if (cudaMalloc(&array, bytes) != cudaSuccess) return "cudaMalloc failed";
  }
  for (unsigned a = 0; a < options.arrays; ++a) fill<<<256, 256, 0, stream>>>(arrays[a], n, thread, a);
  for (unsigned step = 0; step < options.steps; ++step) {
    for (unsigned a = 0; a < options.arrays; ++a) {
      if (options.copy_2d) {
        std::uint32_t* twin = arrays[options.arrays + a];
        if (cudaMemcpy2DAsync(twin, kPitch, arrays[a], kPitch, kPitch, bytes / kPitch,
                              cudaMemcpyDeviceToDevice, stream) != cudaSuccess)
          return "cudaMemcpy2DAsync failed";
        std::swap(arrays[a], arrays[options.arrays + a]);
      }
      advance<<<256, 256, 0, stream>>>(arrays[a], n, increment(step, thread, a));
    }
  }
  const cudaError_t e = cudaStreamSynchronize(stream);
  return e == cudaSuccess ? std::string() : std::string("a kernel failed: ") + cudaGetErrorString(e);
}

// Every value of one thread's array against the host's arithmetic; the first wrong one printed.
bool check(const Options& options, unsigned thread, unsigned array, const std::vector<std::uint32_t>& got) {
  std::uint32_t scale = 1, offset = 0;  // the steps composed: x -> scale * x + offset
  for (unsigned step = 0; step < options.steps; ++step) {
    scale *= kMultiplier;
    offset = offset * kMultiplier + increment(step, thread, array);
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    const std::uint32_t want = scale * initial(i, thread, array) + offset;
    if (got[i] != want) {
      std::printf("FAIL: thread %u array %u value %zu is %u, want %u\n", thread, array, i, got[i], want);
      return false;
    }
  }
  return true;
}

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--copy-2d") {
      options.copy_2d = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    const char* value = argv[++i];
    if (arg == "--threads") {
      options.threads = static_cast<unsigned>(std::strtoul(value, nullptr, 10));
    } else if (arg == "--arrays") {
      options.arrays = static_cast<unsigned>(std::strtoul(value, nullptr, 10));
    } else if (arg == "--mib") {
      options.mib = std::strtoull(value, nullptr, 10);
    } else if (arg == "--steps") {
      options.steps = static_cast<unsigned>(std::strtoul(value, nullptr, 10));
    } else if (arg == "--stream" && (std::string(value) == "legacy" || std::string(value) == "per-thread")) {
      options.per_thread = std::string(value) == "per-thread";
    } else {
      return false;
    }
  }
  return options.threads != 0 && options.arrays != 0 && options.mib != 0;  // a MiB is 256 rows of kPitch
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: threads_streams_check [--threads T] [--arrays A] [--mib M] [--steps N] "
                 "[--stream legacy|per-thread] [--copy-2d]\n");
    return 2;
  }
  const unsigned held = options.copy_2d ? 2 * options.arrays : options.arrays;
  std::vector<std::vector<std::uint32_t*>> arrays(options.threads, std::vector<std::uint32_t*>(held));
  std::vector<std::string> errors(options.threads);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < options.threads; ++t)
    threads.emplace_back([&, t] { errors[t] = run_thread(options, t, arrays[t]); });
  for (std::thread& thread : threads) thread.join();
  bool right = true;
  for (unsigned t = 0; t < options.threads; ++t) {
    if (!errors[t].empty()) {
      std::printf("FAIL: thread %u: %s\n", t, errors[t].c_str());
      return 1;
    }
  }
  std::vector<std::uint32_t> got(options.mib * (std::size_t{1} << 20) / sizeof(std::uint32_t));
  for (unsigned t = 0; t < options.threads && right; ++t) {
    for (unsigned a = 0; a < options.arrays && right; ++a) {
      if (cudaMemcpy(got.data(), arrays[t][a], got.size() * sizeof(std::uint32_t), cudaMemcpyDeviceToHost) !=
          cudaSuccess) {
        std::printf("FAIL: copying thread %u array %u back failed\n", t, a);
        return 1;
      }
      right = check(options, t, a, got);
    }
  }
  for (auto& mine : arrays) {
    for (std::uint32_t* array : mine) cudaFree(array);
  }
  if (!right) return 1;
  std::printf(
      "threads_streams_check: %u threads x %u arrays x %zu MiB, %u steps on %s streams%s: every value "
      "right\n",
      options.threads, options.arrays, options.mib, options.steps,
      options.per_thread ? "per-thread" : "the legacy", options.copy_2d ? ", each through a 2-D copy" : "");
  return 0;
}
