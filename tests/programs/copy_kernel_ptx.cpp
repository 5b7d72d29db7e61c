// copy_kernel_ptx: prints the PTX of deepum's copy kernel (cuda/copy_kernel.hpp), for ptxas to
// check without a GPU.
#include <cstdio>

#include "deepum/cuda/copy_kernel.hpp"

int main() { return std::fputs(deepum::cuda::CopyKernel::ptx(), stdout) < 0 ? 1 : 0; }
