// streaming_check: a CUDA program that streams over more memory than a (emulated) small GPU holds,
// in a fixed cyclic order, and checks every byte at the end. Each step, kernel i turns buffer i
// into buffer i+1 (mod K) with exact integer arithmetic, so the host can compute what the GPU must
// have produced. Under deepum with a resident limit below the footprint, it tests that the
// engine's moves never lose or corrupt data, with a launch pattern without PyTorch.
//
//   streaming_check [--buffers K] [--mib M] [--steps N] [--json FILE]
//
// Exit status: 0 data verified, 1 mismatch or CUDA error, 2 usage.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t e = (call);                                                               \
    if (e != cudaSuccess) {                                                               \
      std::fprintf(stderr, "streaming_check: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorString(e));                                                \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

__host__ __device__ std::uint32_t next_value(std::uint32_t value, std::uint32_t index, std::uint32_t step) {
  return value * 1664525u + 1013904223u + (index ^ step);
}

__global__ void fill(std::uint32_t* data, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = seed ^ static_cast<std::uint32_t>(i * 2654435761u);
}

__global__ void advance(const std::uint32_t* in, std::uint32_t* out, std::size_t n, std::uint32_t step) {
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = next_value(in[i], static_cast<std::uint32_t>(i), step);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t buffers = 8, mib = 32, steps = 4;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--buffers" && has_value) {
      buffers = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--mib" && has_value) {
      mib = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--steps" && has_value) {
      steps = std::strtoull(argv[++i], nullptr, 10);
    } else if (arg == "--json" && has_value) {
      json = argv[++i];
    } else {
      std::fprintf(stderr, "usage: streaming_check [--buffers K] [--mib M] [--steps N] [--json FILE]\n");
      return 2;
    }
  }
  if (buffers < 2 || mib == 0 || steps == 0) {
    std::fprintf(stderr, "streaming_check: need at least 2 buffers, 1 MiB each, 1 step\n");
    return 2;
  }
  const std::size_t n = (mib << 20) / sizeof(std::uint32_t);
  std::vector<std::uint32_t*> device(buffers);
  for (auto& buffer : device) CHECK_CUDA(cudaMalloc(&buffer, n * sizeof(std::uint32_t)));

  // What the GPU must produce, on the host: the same chain on the first buffer's values.
  std::vector<std::vector<std::uint32_t>> expected(buffers, std::vector<std::uint32_t>(n));
  for (std::size_t b = 0; b < buffers; ++b) {
    fill<<<1024, 256>>>(device[b], n, static_cast<std::uint32_t>(b + 1));
    for (std::size_t i = 0; i < n; ++i)
      expected[b][i] = static_cast<std::uint32_t>(b + 1) ^ static_cast<std::uint32_t>(i * 2654435761u);
  }
  CHECK_CUDA(cudaDeviceSynchronize());

  // The GPU's steps, timed alone; the host's reference follows, untimed.
  std::vector<double> step_ms;
  for (std::size_t step = 0; step < steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t b = 0; b + 1 < buffers; ++b) {
      advance<<<1024, 256>>>(device[b], device[b + 1], n, static_cast<std::uint32_t>(step * buffers + b));
    }
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    step_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  // Each element's chain is independent of the others': the host's threads split the elements
  // (one thread took 50 s for 60 steps of 2 GiB, longer than the GPU's part under deepum).
  const auto reference = [&](std::size_t first, std::size_t last) {
    for (std::size_t step = 0; step < steps; ++step) {
      for (std::size_t b = 0; b + 1 < buffers; ++b) {
        const auto s = static_cast<std::uint32_t>(step * buffers + b);
        for (std::size_t i = first; i < last; ++i)
          expected[b + 1][i] = next_value(expected[b][i], static_cast<std::uint32_t>(i), s);
      }
    }
  };
  const std::size_t workers = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w)
    threads.emplace_back(reference, n * w / workers, n * (w + 1) / workers);
  for (std::thread& t : threads) t.join();

  std::size_t wrong = 0;
  std::vector<std::uint32_t> host(n);
  std::vector<std::uint64_t> checksums;
  for (std::size_t b = 0; b < buffers; ++b) {
    CHECK_CUDA(cudaMemcpy(host.data(), device[b], n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      wrong += host[i] != expected[b][i];
      sum += host[i];
    }
    checksums.push_back(sum);
  }
  for (auto* buffer : device) CHECK_CUDA(cudaFree(buffer));

  std::vector<double> sorted(step_ms.begin() + (steps > 1 ? 1 : 0), step_ms.end());
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted[sorted.size() / 2];
  const std::size_t footprint = buffers * n * sizeof(std::uint32_t);
  std::printf("streaming_check: %zu buffers x %zu MiB, %zu steps, median step %.3f ms, %zu wrong values\n",
              buffers, mib, steps, median, wrong);
  if (!json.empty()) {
    if (FILE* f = std::fopen(json.c_str(), "w")) {
      std::fprintf(f,
                   "{\"workload\": \"streaming\", \"median_step_ms\": %.3f, \"peak_reserved_bytes\": %zu, "
                   "\"wrong_values\": %zu, \"losses\": [",
                   median, footprint, wrong);
      for (std::size_t b = 0; b < checksums.size(); ++b)
        std::fprintf(f, "%s%llu", b ? ", " : "", static_cast<unsigned long long>(checksums[b]));
      std::fprintf(f, "]}\n");
      std::fclose(f);
    }
  }
  return wrong == 0 ? 0 : 1;
}
