#include "deepum/core/indirect_kernels.hpp"

namespace deepum::core {

bool reaches_buffers_indirectly(std::string_view kernel_name) {
  // NCCL 2.19 on: ncclDevKernel_<collective>_...; earlier: ncclKernel_... (C++ names, so mangled).
  return kernel_name.find("ncclDevKernel") != std::string_view::npos ||
         kernel_name.find("ncclKernel") != std::string_view::npos;
}

}  // namespace deepum::core
