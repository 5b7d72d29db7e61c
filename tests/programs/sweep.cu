// sweep: a plain CUDA program (nvcc's defaults: cudart linked statically) that sweeps a set of
// arrays cyclically, the access pattern a least-recently-used eviction gets exactly wrong. Every
// step updates each array from the next one and checks it with a deterministic reduction.
// Prints `step N loss X time_ms Y` per step (the loss is the checksum) and `footprint_bytes N`.
//
// sweep [--arrays K] [--mib M] [--steps S]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

__global__ void fill(float* a, size_t n, float seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    a[i] = seed + static_cast<float>(i % 1024) * 0.001f;
}

__global__ void update(float* a, const float* next, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    a[i] = a[i] * 0.999f + next[i] * 0.001f;
}

// One partial sum per block, in a fixed order: the same on every run.
__global__ void partial_sums(const float* a, size_t n, double* out) {
  __shared__ double shared[kThreads];
  double sum = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    sum += a[i];
  shared[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = shared[0];
}

bool check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "sweep: %s: %s\n", what, cudaGetErrorString(error));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int arrays = 16, mib = 256, steps = 6;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--arrays") == 0) arrays = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--mib") == 0) mib = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--steps") == 0) steps = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--arrays K] [--mib M] [--steps S]\n", argv[0]);
      return 2;
    }
  }
  if (arrays < 2 || mib < 1 || steps < 1) {
    std::fprintf(stderr, "sweep: need at least 2 arrays, 1 MiB, 1 step\n");
    return 2;
  }
  const size_t n = size_t(mib) << 18;  // floats
  std::vector<float*> data(static_cast<size_t>(arrays));
  double* sums = nullptr;
  for (int i = 0; i < arrays; ++i) {
    if (!check(cudaMalloc(&data[static_cast<size_t>(i)], n * sizeof(float)), "cudaMalloc")) return 1;
    fill<<<kBlocks, kThreads>>>(data[static_cast<size_t>(i)], n, static_cast<float>(i));
  }
  if (!check(cudaMalloc(&sums, kBlocks * sizeof(double)), "cudaMalloc") || !check(cudaDeviceSynchronize(), "fill"))
    return 1;
  std::vector<double> host(kBlocks);
  for (int step = 0; step < steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    double total = 0;
    for (int i = 0; i < arrays; ++i) {
      float* a = data[static_cast<size_t>(i)];
      update<<<kBlocks, kThreads>>>(a, data[static_cast<size_t>((i + 1) % arrays)], n);
      partial_sums<<<kBlocks, kThreads>>>(a, n, sums);
      if (!check(cudaMemcpy(host.data(), sums, kBlocks * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy"))
        return 1;
      for (double s : host) total += s;
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("step %d loss %.17g time_ms %.3f\n", step, total, ms);
    std::fflush(stdout);
  }
  std::printf("footprint_bytes %zu\n", size_t(arrays) * n * sizeof(float) + kBlocks * sizeof(double));
  for (float* a : data) cudaFree(a);
  cudaFree(sums);
  return 0;
}
