// reset_check: cudaDeviceReset in the middle of a run. The reset frees every allocation of the
// context and destroys its streams and events, deepum's among them; deepum must forget that
// memory (its allocation limit credited), stop using its streams, and let the program go on.
// Allocates most of the allocation limit, computes, resets, allocates it again and computes again.
// Prints `result ...` lines (tests/integration/same_results.sh). Exit 0 when it ran, 77 without a GPU.
#include <execinfo.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "check_cuda.hpp"

namespace {

// A crash under deepum is the failure this test looks for: where it happened goes to stderr
// (addresses: `addr2line -e LIB OFFSET` names them).
void print_backtrace_and_die(int signal_number) {
  void* frames[64];
  const int count = backtrace(frames, 64);
  backtrace_symbols_fd(frames, count, STDERR_FILENO);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}

__global__ void fill(float* a, size_t n, float value) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x)
    a[i] = value + static_cast<float>(i % 7);
}


// Allocates `count` buffers of `n` floats, fills them, and returns the sum of one value from each.
int round(int count, size_t n, float value, double* total) {
  std::vector<float*> buffers(static_cast<size_t>(count));
  for (float*& b : buffers) {
    CHECK_CUDA(cudaMalloc(&b, n * sizeof(float)));
    fill<<<128, 256>>>(b, n, value);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  *total = 0;
  for (float* b : buffers) {
    float v = 0;
    CHECK_CUDA(cudaMemcpy(&v, b + n - 1, sizeof(float), cudaMemcpyDeviceToHost));
    *total += v;
  }
  return 0;  // the buffers are left for the reset to free
}

}  // namespace

int main() {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // what ran before a crash still shows
  std::signal(SIGSEGV, print_backtrace_and_die);
  std::signal(SIGABRT, print_backtrace_and_die);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  constexpr size_t n = size_t{32} << 20;  // 128 MiB of floats per buffer
  double total = 0;
  if (round(6, n, 1.0f, &total) != 0) return 1;
  std::printf("result before the reset %.1f\n", total);
  CHECK_CUDA(cudaDeviceReset());
  // Six more buffers: under a 1 GiB allocation limit these fit only if the reset's memory was
  // credited back.
  if (round(6, n, 2.0f, &total) != 0) return 1;
  std::printf("result after the reset %.1f\n", total);
  CHECK_CUDA(cudaDeviceReset());
  return 0;
}
