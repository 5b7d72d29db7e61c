// CHECK_CUDA for the runtime-API test programs: a failed call prints what failed and returns 1
// from the function (main) it is in.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>

#define CHECK_CUDA(call)                                              \
  do {                                                                \
    const cudaError_t e_ = (call);                                    \
    if (e_ != cudaSuccess) {                                          \
      std::printf("FAIL: %s: %s\n", #call, cudaGetErrorString(e_));   \
      return 1;                                                       \
    }                                                                 \
  } while (0)
