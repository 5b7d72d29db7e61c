// RealFunction: a lazily resolved pointer to the real implementation of a CUDA function.
#pragma once

#include <atomic>

#include "deepum/cuda/real_symbols.hpp"

namespace deepum::cuda {

enum class Library { cudart, libcuda, nccl };

template <typename Fn>
class RealFunction {
 public:
  constexpr RealFunction(const char* name, Library library) : name_(name), library_(library) {}

  // nullptr when the library that defines it is not loaded.
  Fn get() {
    Fn fn = fn_.load(std::memory_order_acquire);
    if (fn == nullptr) {
      void* found = library_ == Library::cudart ? find_runtime_function(name_)
                    : library_ == Library::nccl ? find_nccl_function(name_)
                                                : find_driver_function(name_);
      fn = reinterpret_cast<Fn>(found);
      fn_.store(fn, std::memory_order_release);
    }
    return fn;
  }
  // The driver handed us the real pointer (through dlsym or cuGetProcAddress).
  void set(void* fn) { fn_.store(reinterpret_cast<Fn>(fn), std::memory_order_release); }
  const char* name() const { return name_; }

 private:
  const char* name_;
  Library library_;
  std::atomic<Fn> fn_{nullptr};
};

}  // namespace deepum::cuda
