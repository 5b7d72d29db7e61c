// Finding the real functions behind our interposers without going through our own exports.
#pragma once

namespace deepum::cuda {

using DlsymFn = void* (*)(void*, const char*);

// glibc's dlsym, found with dlvsym so that our own dlsym interposer is never in the way.
DlsymFn real_dlsym();

// dlsym(RTLD_NEXT, name) as seen from `caller`: the first definition in an object loaded after
// the caller's. Needed because forwarding RTLD_NEXT from our interposer would search after us.
void* next_symbol_after(const void* caller, const char* name);

// A CUDA runtime function from the libcudart the program loaded (RTLD_NEXT first; then any
// loaded libcudart.so*, since Python extensions load it RTLD_LOCAL). nullptr if none is loaded.
void* find_runtime_function(const char* name);

// An NCCL function from the libnccl the program loaded (RTLD_NEXT first; then any loaded
// libnccl.so*, which PyTorch's extension loads RTLD_LOCAL). nullptr if none is loaded.
void* find_nccl_function(const char* name);

// A symbol exported by a loaded library whose path contains `library_fragment`, also when the
// library was loaded RTLD_LOCAL (as Python extensions load theirs); nullptr if none has it.
void* find_loaded_symbol(const char* library_fragment, const char* name);

// The driver library, libcuda.so.1, or nullptr if there is none (no driver on this machine).
void* libcuda_handle();
// A function exported by libcuda, looked up directly (never through our interposers).
void* find_driver_function(const char* name);

}  // namespace deepum::cuda
