// threads_streams_check: several host threads launch kernels at once, all on the legacy default
// stream or each on its own per-thread default stream, over more memory than the (emulated) GPU
// holds, and every value is checked at the end. Under deepum with swapping, it tests that a move
// decided in one thread is ordered after another thread's launches of the same memory: those
// already enqueued in a shared stream, those still inside their driver call, and those in
// another thread's per-thread stream, which the same driver handle names in every thread.
//
//   threads_streams_check [--threads T] [--arrays A] [--mib M] [--steps N] [--stream legacy|per-thread]
//                         [--copy-2d | --copy-2d-side]
//
// Each thread owns A arrays; each step it advances each array once, in place, with exact integer
// arithmetic whose result depends on the order of the steps (a copy out or in at the wrong time
// shows). With --copy-2d each array has a twin: a step copies the array into it with
// cudaMemcpy2DAsync (a copy deepum does not decode: it may reach any memory), advances the twin,
// and the two trade places. With --copy-2d-side the twin is a snapshot a second stream of the thread
// takes with that copy after each advance, while the thread goes on with its other arrays; the
// next advance adds it in (x = x * multiplier + add + snapshot), while a swap in the first stream
// may take the array the copy reads. Exit status: 0 every value right, 1 a mismatch or a CUDA error, 2 usage.
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

// With the snapshot, which equals `data` when it is right: data * (kMultiplier + 1) + add.
__global__ void advance_with(std::uint32_t* data, const std::uint32_t* snapshot, std::size_t n,
                             std::uint32_t add) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = data[i] * kMultiplier + add + snapshot[i];
}

struct Options {
  unsigned threads = 8, arrays = 4, steps = 100;
  std::size_t mib = 16;
  bool per_thread = false;
  enum class Copies { none, in_stream, side } copies = Copies::none;
};

constexpr std::size_t kPitch = 4096;  // the 2-D copies' row, in bytes

// --copy-2d-side, after the arrays are filled: the snapshots start equal to them, and each step adds
// them in, then takes them again in the thread's second stream.
std::string run_side_copies(const Options& options, unsigned thread, std::vector<std::uint32_t*>& arrays,
                            cudaStream_t stream) {
  const std::size_t bytes = options.mib * (std::size_t{1} << 20);
  const std::size_t n = bytes / sizeof(std::uint32_t);
  cudaStream_t side = nullptr;
  cudaEvent_t taken = nullptr;
  std::vector<cudaEvent_t> advanced(options.arrays);
  if (cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking) != cudaSuccess ||
      cudaEventCreateWithFlags(&taken, cudaEventDisableTiming) != cudaSuccess)
    return "a stream or event could not be made";
  for (cudaEvent_t& event : advanced) {
    if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess)
      return "an event could not be made";
  }
  for (unsigned a = 0; a < options.arrays; ++a)
    fill<<<256, 256, 0, stream>>>(arrays[options.arrays + a], n, thread, a);
  bool copied = true;
  for (unsigned step = 0; step < options.steps && copied; ++step) {
    copied = cudaStreamWaitEvent(stream, taken, 0) == cudaSuccess;  // the last snapshots are taken
    for (unsigned a = 0; a < options.arrays && copied; ++a) {
      std::uint32_t* snapshot = arrays[options.arrays + a];
      advance_with<<<256, 256, 0, stream>>>(arrays[a], snapshot, n, increment(step, thread, a));
      copied = cudaEventRecord(advanced[a], stream) == cudaSuccess &&
               cudaStreamWaitEvent(side, advanced[a], 0) == cudaSuccess &&
               cudaMemcpy2DAsync(snapshot, kPitch, arrays[a], kPitch, kPitch, bytes / kPitch,
                                 cudaMemcpyDeviceToDevice, side) == cudaSuccess;
    }
    copied = copied && cudaEventRecord(taken, side) == cudaSuccess;
  }
  const cudaError_t e = copied ? cudaStreamSynchronize(side) : cudaErrorUnknown;
  const cudaError_t f = cudaStreamSynchronize(stream);
  for (cudaEvent_t event : advanced) cudaEventDestroy(event);
  cudaEventDestroy(taken);
  cudaStreamDestroy(side);
  if (e != cudaSuccess || f != cudaSuccess) return "a copy or kernel failed";
  return {};
}

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
  if (options.copies == Options::Copies::side) return run_side_copies(options, thread, arrays, stream);
  for (unsigned step = 0; step < options.steps; ++step) {
    for (unsigned a = 0; a < options.arrays; ++a) {
      if (options.copies == Options::Copies::in_stream) {
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
  const std::uint32_t multiplier = options.copies == Options::Copies::side ? kMultiplier + 1 : kMultiplier;
  for (unsigned step = 0; step < options.steps; ++step) {
    scale *= multiplier;
    offset = offset * multiplier + increment(step, thread, array);
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
    if (arg == "--copy-2d" || arg == "--copy-2d-side") {
      options.copies = arg == "--copy-2d" ? Options::Copies::in_stream : Options::Copies::side;
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
                 "[--stream legacy|per-thread] [--copy-2d | --copy-2d-side]\n");
    return 2;
  }
  const unsigned held = options.copies == Options::Copies::none ? options.arrays : 2 * options.arrays;
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
      options.per_thread ? "per-thread" : "the legacy",
      options.copies == Options::Copies::none        ? ""
      : options.copies == Options::Copies::in_stream ? ", each through a 2-D copy"
                                                     : ", each with a 2-D copy in a second stream");
  return 0;
}
