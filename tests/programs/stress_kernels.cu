// Kernels for tracer_stress: many distinct functions with four parameter layouts, so every module
// load gives the tracer many functions it has never seen, each with a layout to learn.
#define DEEPUM_STRESS_KERNELS(X) \
  X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18) \
  X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)

struct Pair {
  float* out;
  const float* in;
};

// Layout a: (out, in, n); b: (n, scale, out); c: a struct holding two pointers, then n; d: eight
// scalars around one pointer.
#define DEEPUM_STRESS_KERNEL(i)                                                                           \
  extern "C" __global__ void stress_a##i(float* out, const float* in, int n) {                           \
    const int t = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
    if (t < n) out[t] = in[t] + float(i);                                                                \
  }                                                                                                       \
  extern "C" __global__ void stress_b##i(int n, float scale, float* out) {                               \
    const int t = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
    if (t < n) out[t] = out[t] * scale + float(i);                                                       \
  }                                                                                                       \
  extern "C" __global__ void stress_c##i(Pair pair, int n) {                                             \
    const int t = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
    if (t < n) pair.out[t] = pair.in[t] - float(i);                                                      \
  }                                                                                                       \
  extern "C" __global__ void stress_d##i(char a, short b, int c, long long d, float* out, double e, int n, \
                                         char f) {                                                        \
    const int t = blockIdx.x * blockDim.x + threadIdx.x;                                                 \
    if (t < n) out[t] = float(a + b + c + d + e + f + i);                                                \
  }

DEEPUM_STRESS_KERNELS(DEEPUM_STRESS_KERNEL)

#ifdef DEEPUM_STRESS_RUNTIME_ENTRY
// Built into a shared library with the CUDA runtime: launches every kernel once through cudart
// (CUkernel handles, loaded lazily at their first launch), as PyTorch's kernels are launched.
// Returns cudaGetLastError() as an int.
extern "C" int stress_launch_all(cudaStream_t stream, float* out, const float* in, int n, int seed) {
  const unsigned grid = (n + 255) / 256;
  Pair pair{out, in};
#define DEEPUM_STRESS_LAUNCH(i)                                                                  \
  if ((i + seed) % 2 == 0) {                                                                      \
    stress_d##i<<<grid, 256, 0, stream>>>(1, 3, 4, 5, out, 6.0, n, 2);                           \
    stress_b##i<<<grid, 256, 0, stream>>>(n, 1.0f, out);                                          \
  } else {                                                                                        \
    stress_c##i<<<grid, 256, 0, stream>>>(pair, n);                                               \
  }
  DEEPUM_STRESS_KERNELS(DEEPUM_STRESS_LAUNCH)
  // Last: out = in + 31.
  stress_a31<<<grid, 256, 0, stream>>>(out, in, n);
  return static_cast<int>(cudaGetLastError());
}
#endif
