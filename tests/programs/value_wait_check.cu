// value_wait_check: a stream waits on the GPU for a value the host writes once a second stream's
// later work has run (cuStreamWaitValue32 on a flag in mapped host memory), while both streams work
// through more memory than the (emulated) GPU holds. Natively the second stream never waits for the
// first. Under deepum, a move decided after the wait would be ordered after it, and the second
// stream's launches would wait for that move (for its room, or behind it): the program would hang.
// (A wait for a value a later kernel writes would be ordered by the wait alone, which CUDA does not
// support: it can hang natively.) Every value is checked.
//
//   value_wait_check [--arrays A] [--mib M] [--rounds R]
//
// 2A arrays of M MiB. Before and after the waits, every array is advanced three times in the first
// stream (swaps happen there); in each of R rounds in between, the first stream waits for the flag
// to reach the round's number and advances the first A arrays, the second stream advances the
// other A, and the host sets the flag once the second stream is done. The arithmetic is exact and
// depends on the order of the steps.
// Exit status: 0 every value right, 1 a mismatch or a CUDA error, 2 usage, 77 no GPU or no stream
// memory operations on it.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr std::uint32_t kMultiplier = 1664525u;
constexpr unsigned kStepsAround = 3;  // advances before and after the rounds of waits

__host__ __device__ std::uint32_t increment(std::uint32_t step, std::uint32_t array) {
  return 1013904223u + step * 131u + array * 104729u;
}

__host__ __device__ std::uint32_t initial(std::size_t i, std::uint32_t array) {
  return static_cast<std::uint32_t>(i * 2654435761u) ^ (array << 12);
}

__global__ void fill(std::uint32_t* data, std::size_t n, std::uint32_t array) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = initial(i, array);
}

__global__ void advance(std::uint32_t* data, std::size_t n, std::uint32_t add) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = data[i] * kMultiplier + add;
}

struct Options {
  unsigned arrays = 4, rounds = 8;
  std::size_t mib = 32;
};

bool parse(int argc, char** argv, Options& options) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    const unsigned long value = std::strtoul(argv[i + 1], nullptr, 10);
    if (arg == "--arrays") {
      options.arrays = static_cast<unsigned>(value);
    } else if (arg == "--mib") {
      options.mib = value;
    } else if (arg == "--rounds") {
      options.rounds = static_cast<unsigned>(value);
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && options.arrays != 0 && options.mib != 0 && options.rounds != 0;
}

// An array's steps, in order, as one map x -> x * multiply + add (mod 2^32).
struct Steps {
  std::uint32_t multiply = 1, add = 0;
  Steps(unsigned array, unsigned steps) {
    for (unsigned step = 0; step < steps; ++step) {
      multiply *= kMultiplier;
      add = add * kMultiplier + increment(step, array);
    }
  }
  std::uint32_t of(std::uint32_t x) const { return x * multiply + add; }
};

struct Run {
  const Options& options;
  std::vector<std::uint32_t*> arrays;
  cudaStream_t first = nullptr, second = nullptr;
  std::size_t n = 0;

  void advance_all(unsigned step) {
    for (unsigned a = 0; a < arrays.size(); ++a)
      advance<<<256, 256, 0, first>>>(arrays[a], n, increment(step, a));
  }

  // Round `round`: the first stream waits for the flag the host sets once the second one is done.
  std::string wait_round(unsigned round, unsigned step, volatile std::uint32_t* flag,
                         CUdeviceptr flag_device) {
    const CUresult waited = cuStreamWaitValue32(first, flag_device, round + 1, CU_STREAM_WAIT_VALUE_GEQ);
    if (waited == CUDA_ERROR_NOT_SUPPORTED) return "skip";
    if (waited != CUDA_SUCCESS) return "cuStreamWaitValue32 failed (" + std::to_string(waited) + ")";
    for (unsigned a = 0; a < options.arrays; ++a)
      advance<<<256, 256, 0, first>>>(arrays[a], n, increment(step, a));
    for (unsigned a = options.arrays; a < arrays.size(); ++a)
      advance<<<256, 256, 0, second>>>(arrays[a], n, increment(step, a));
    if (cudaError_t e = cudaStreamSynchronize(second); e != cudaSuccess) return cudaGetErrorString(e);
    *flag = round + 1;
    return {};
  }
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: value_wait_check [--arrays A] [--mib M] [--rounds R]\n");
    return 2;
  }
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("SKIP: no GPU\n");
    return 77;
  }
  std::uint32_t* flag_memory = nullptr;
  std::uint32_t* flag_device = nullptr;
  if (cudaHostAlloc(&flag_memory, sizeof(std::uint32_t), cudaHostAllocMapped) != cudaSuccess ||
      cudaHostGetDevicePointer(&flag_device, flag_memory, 0) != cudaSuccess) {
    std::printf("FAIL: no mapped host memory for the flag\n");
    return 1;
  }
  volatile std::uint32_t* flag_host = flag_memory;  // the GPU reads it while the host writes
  *flag_host = 0;
  Run run{options, std::vector<std::uint32_t*>(2 * options.arrays)};
  const std::size_t bytes = options.mib << 20;
  run.n = bytes / sizeof(std::uint32_t);
  if (cudaStreamCreateWithFlags(&run.first, cudaStreamNonBlocking) != cudaSuccess ||
      cudaStreamCreateWithFlags(&run.second, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("FAIL: no streams\n");
    return 1;
  }
  for (unsigned a = 0; a < run.arrays.size(); ++a) {
    if (cudaMalloc(&run.arrays[a], bytes) != cudaSuccess) {
      std::printf("FAIL: cudaMalloc failed\n");
      return 1;
    }
    fill<<<256, 256, 0, run.first>>>(run.arrays[a], run.n, a);
  }
  unsigned step = 0;
  for (; step < kStepsAround; ++step) run.advance_all(step);
  // The second stream takes its arrays over from the first.
  cudaEvent_t taken_over = nullptr;
  if (cudaEventCreateWithFlags(&taken_over, cudaEventDisableTiming) != cudaSuccess ||
      cudaEventRecord(taken_over, run.first) != cudaSuccess ||
      cudaStreamWaitEvent(run.second, taken_over, 0) != cudaSuccess) {
    std::printf("FAIL: no event between the streams\n");
    return 1;
  }
  // Where the host got to, should it hang.
  std::fprintf(stderr, "enqueued: the first %u steps\n", kStepsAround);
  for (unsigned round = 0; round < options.rounds; ++round, ++step) {
    if (const std::string error =
            run.wait_round(round, step, flag_host, reinterpret_cast<CUdeviceptr>(flag_device));
        !error.empty()) {
      if (error == "skip") {
        std::printf("SKIP: this GPU has no stream memory operations\n");
        return 77;
      }
      std::printf("FAIL: %s\n", error.c_str());
      return 1;
    }
  }
  std::fprintf(stderr, "enqueued: %u rounds of waits\n", options.rounds);
  // Every wait has passed once the GPU is idle: the moves go on as before.
  cudaError_t synchronized = cudaDeviceSynchronize();
  std::fprintf(stderr, "synchronized after the waits\n");
  for (const unsigned last = step + kStepsAround; step < last; ++step) run.advance_all(step);
  if (synchronized == cudaSuccess) synchronized = cudaDeviceSynchronize();
  if (synchronized != cudaSuccess) {
    std::printf("FAIL: %s\n", cudaGetErrorString(synchronized));
    return 1;
  }
  std::vector<std::uint32_t> got(run.n);
  for (unsigned a = 0; a < run.arrays.size(); ++a) {
    if (cudaMemcpy(got.data(), run.arrays[a], bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
      std::printf("FAIL: copying array %u back failed\n", a);
      return 1;
    }
    const Steps steps(a, step);
    for (std::size_t i = 0; i < run.n; ++i) {
      if (got[i] != steps.of(initial(i, a))) {
        std::printf("FAIL: array %u element %zu is %u, expected %u\n", a, i, got[i], steps.of(initial(i, a)));
        return 1;
      }
    }
    cudaFree(run.arrays[a]);
  }
  cudaFreeHost(flag_memory);
  cudaEventDestroy(taken_over);
  std::printf(
      "PASS: %zu arrays of %zu MiB, %u rounds of waits for a value the host sets later, every value right\n",
      run.arrays.size(), options.mib, options.rounds);
  return 0;
}
