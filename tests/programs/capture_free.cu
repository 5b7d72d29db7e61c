// capture_free: allocations and frees inside a stream capture (global mode) under deepum, against
// what CUDA does natively (tests/integration/same_results.sh compares the `result` lines):
//   1. "copy A into T, double T, copy T back into A, free T" captured, with T allocated in the
//      capture (cudaMallocAsync): the graph's own memory, replayed three times;
//   2. freeing in a capture memory allocated before it: CUDA refuses it; deepum must refuse it too
//      and keep the memory (freeing it would hand it out again under the graph).
// deepum's queries from other threads during the captures would invalidate them. Exit 0 when it
// ran, 77 without a GPU.
#include <cstdio>
#include <vector>

#include "check_cuda.hpp"

namespace {

__global__ void write(float* a, size_t n, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    a[i] = value;
}


__global__ void twice(float* a, size_t n) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    a[i] *= 2.0f;
}

}  // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  constexpr size_t n = size_t{8} << 20;  // 32 MiB of floats
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float* a = nullptr;
  CHECK_CUDA(cudaMalloc(&a, n * sizeof(float)));
  write<<<256, 256, 0, stream>>>(a, n, 1.0f);
  CHECK_CUDA(cudaStreamSynchronize(stream));

  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  float* t = nullptr;
  CHECK_CUDA(cudaMallocAsync(&t, n * sizeof(float), stream));
  CHECK_CUDA(cudaMemcpyAsync(t, a, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  twice<<<256, 256, 0, stream>>>(t, n);
  CHECK_CUDA(cudaMemcpyAsync(a, t, n * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  CHECK_CUDA(cudaFreeAsync(t, stream));
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int replay = 0; replay < 3; ++replay) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> host(n);
  CHECK_CUDA(cudaMemcpy(host.data(), a, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : host) sum += v;
  std::printf("result graph with its own allocation: sum %.1f\n", sum);
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));

  // Memory from before the capture, freed in it.
  float* before = nullptr;
  CHECK_CUDA(cudaMallocAsync(&before, n * sizeof(float), stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  const cudaError_t refused = cudaFreeAsync(before, stream);
  cudaGraph_t discarded = nullptr;
  cudaStreamEndCapture(stream, &discarded);
  if (discarded != nullptr) cudaGraphDestroy(discarded);
  cudaGetLastError();
  std::printf("result free in a capture of memory from before it: %s\n", cudaGetErrorName(refused));
  // Still ours to use and free.
  write<<<256, 256, 0, stream>>>(before, n, 5.0f);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaMemcpy(host.data(), before, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("result the memory afterwards: %s\n", host[n - 1] == 5.0f ? "usable" : "lost");
  CHECK_CUDA(cudaFreeAsync(before, stream));
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  return 0;
}
