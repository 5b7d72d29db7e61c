// FunctionLayouts: every kernel's parameter layout, learned when the program obtains the kernel's
// handle, and read by the launch callback without calling the driver.
//
// Why not in the callback: a launch callback runs inside the driver's launch call, and the driver
// routes cuFuncGetParamInfo and cuKernelGetParamInfo through CUPTI's own locks; with CUPTI busy in
// another thread (flushing records, changing what it records) and another program thread inside
// the driver, asking there deadlocked a Hugging Face BERT-large run at start-up. The getters
// (cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction) are the program's own driver calls:
// learning right after one returns happens on a program thread that holds no lock of deepum's
// and is in no callback, with a handle that is surely valid.
//
// A module or library unloaded (its handles may name other functions later) makes its functions'
// layouts unknown until a getter hands them out again. A launch of a function with no known layout
// is scanned as unreadable (KernelLaunch::unnamed_memory), which the engine treats with care.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "deepum/cupti_tracer/launch_scanner.hpp"

namespace deepum::cupti_tracer {

// Driver functions the tracer and the layouts call, taken straight from libcuda (never the
// program's symbols, never our interposers). Each may be nullptr; the caller does without.
struct DriverApi {
  CUresult(CUDAAPI* func_get_param_info)(CUfunction, size_t, size_t*,
                                         size_t*) = nullptr;  // cuFuncGetParamInfo
  CUresult(CUDAAPI* kernel_get_param_info)(CUkernel, size_t, size_t*,
                                           size_t*) = nullptr;           // cuKernelGetParamInfo
  CUresult(CUDAAPI* func_get_name)(const char**, CUfunction) = nullptr;  // cuFuncGetName
  CUresult(CUDAAPI* kernel_get_name)(const char**, CUkernel) = nullptr;  // cuKernelGetName
  CUresult(CUDAAPI* device_get_count)(int*) = nullptr;  // cuDeviceGetCount (um_counter_all_devices)
};

struct FunctionLayoutStats {
  std::uint64_t functions = 0;      // handles with a layout entry, known or not
  std::uint64_t from_function = 0;  // learned through cuFuncGetParamInfo
  std::uint64_t from_kernel = 0;    // learned through cuKernelGetParamInfo (a CUkernel handle)
  std::uint64_t unknown = 0;        // the driver would not say
  std::uint64_t unloads = 0;        // modules and libraries unloaded with functions known
  std::uint64_t already_known = 0;  // getter calls for a handle already learned
};

class FunctionLayouts {
 public:
  enum class Handle : std::uint8_t { function, kernel };  // CUfunction, or CUkernel

  explicit FunctionLayouts(DriverApi driver, std::size_t capacity = 16384)
      : driver_(driver), cache_(capacity) {}
  FunctionLayouts(const FunctionLayouts&) = delete;
  FunctionLayouts& operator=(const FunctionLayouts&) = delete;

  // A program thread, right after a getter handed out `handle` (of module or library `owner`).
  void learn(std::uint64_t handle, Handle kind, std::uint64_t owner) noexcept;
  // A program thread, before the driver unloads module or library `owner`.
  void forget_owner(std::uint64_t owner) noexcept;

  // The launch callback: the layout, or nullptr when unknown. Lock-free, calls nothing.
  const ParamLayout* find(std::uint64_t function) const noexcept;
  // The launch callback: true once per function (its first launch since it was learned or first
  // seen), so its name is reported once. May take the cache's lock to note an unseen function;
  // calls nothing.
  bool first_launch(std::uint64_t function) noexcept;
  // The context of every module's CUfunction is gone (cudaDeviceReset): those handles may be
  // reused. CUkernel handles belong to their library, not a context, and stay.
  void forget_context_functions() noexcept;

  FunctionLayoutStats stats() const noexcept;

 private:
  void compute(std::uint64_t handle, Handle kind, ParamLayout& layout) const noexcept;

  const DriverApi driver_;
  LayoutCache cache_;
  std::mutex owners_mutex_;  // learn and forget_owner only: program threads, outside callbacks
  struct Learned {
    std::uint64_t owner = 0;
    Handle kind = Handle::function;
  };
  void forget(std::uint64_t handle) noexcept;                                   // under owners_mutex_
  std::unordered_map<std::uint64_t, std::vector<std::uint64_t>> functions_of_;  // by owner
  std::unordered_map<std::uint64_t, Learned> learned_;                          // by handle
  std::atomic<std::uint64_t> from_function_{0}, from_kernel_{0}, unknown_{0}, unloads_{0}, already_known_{0};
};

}  // namespace deepum::cupti_tracer
