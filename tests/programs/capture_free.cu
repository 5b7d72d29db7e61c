// capture_free: memory freed with cudaFreeAsync while its stream is captured into a graph must not
// be handed out again before the graph has run: the graph's kernel still writes it. Allocates A,
// captures "write A, free A" (global capture mode), then allocates B of the same size and fills it,
// launches the graph, and checks that B still holds its own contents. Also checks that the capture
// is still valid, which any query or synchronize from another thread during it would have broken.
// Exit 0 on success, 1 on a failed check, 77 without a GPU.
#include <cstdio>
#include <vector>

namespace {

__global__ void write(float* a, size_t n, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    a[i] = value;
}

#define CHECK_CUDA(call)                                                                \
  do {                                                                                  \
    const cudaError_t e_ = (call);                                                      \
    if (e_ != cudaSuccess) {                                                            \
      std::printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e_));                     \
      return 1;                                                                         \
    }                                                                                   \
  } while (0)

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
  CHECK_CUDA(cudaMallocAsync(&a, n * sizeof(float), stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  cudaGraph_t graph = nullptr;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  write<<<256, 256, 0, stream>>>(a, n, 7.0f);
  CHECK_CUDA(cudaFreeAsync(a, stream));
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec = nullptr;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  // B, allocated once the capture is over and filled with 3s: it must not be A.
  float* b = nullptr;
  CHECK_CUDA(cudaMalloc(&b, n * sizeof(float)));
  write<<<256, 256, 0, stream>>>(b, n, 3.0f);
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> host(n);
  CHECK_CUDA(cudaMemcpy(host.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost));
  size_t wrong = 0;
  for (float v : host) wrong += v != 3.0f;
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaFree(b));
  if (wrong != 0) {
    std::printf("FAIL: the graph wrote into memory handed out after the capture freed it (%zu of %zu values)%s\n",
                wrong, n, b == a ? ": the same address" : "");
    return 1;
  }
  std::printf("PASS capture_free (A %p, B %p)\n", static_cast<void*>(a), static_cast<void*>(b));
  return 0;
}
