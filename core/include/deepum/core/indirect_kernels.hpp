// Kernels that reach their buffers through structures of their own library rather than through
// their parameters, so that deepum cannot see what they read or write: NCCL's collectives (the
// buffers are arguments of ncclAllReduce and the like, which NCCL keeps in device memory for its
// kernels). A swapped or freshly placed block such a kernel uses would be read dropped, or its
// write lost.
#pragma once

#include <string_view>

namespace deepum::core {

// Whether the kernel of this (mangled or plain) name is one of those.
bool reaches_buffers_indirectly(std::string_view kernel_name);

}  // namespace deepum::core
