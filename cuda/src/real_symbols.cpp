#include "deepum/cuda/real_symbols.hpp"

#include <dlfcn.h>
#include <link.h>

#include "deepum/core/loaded_objects.hpp"

namespace deepum::cuda {
namespace {

DlsymFn lookup_real_dlsym() {
  // glibc >= 2.34 versions dlsym GLIBC_2.34 (libc) and keeps GLIBC_2.2.5 for old binaries.
  static constexpr const char* kVersions[] = {"GLIBC_2.34", "GLIBC_2.2.5"};
  for (const char* version : kVersions) {
    if (void* fn = dlvsym(RTLD_NEXT, "dlsym", version)) return reinterpret_cast<DlsymFn>(fn);
  }
  return nullptr;
}

// The object that holds `address`, as a glibc link_map (which is also its dlopen handle).
link_map* object_of(const void* address) {
  Dl_info info;
  void* extra = nullptr;
  if (dladdr1(address, &info, &extra, RTLD_DL_LINKMAP) == 0) return nullptr;
  return static_cast<link_map*>(extra);
}

}  // namespace

DlsymFn real_dlsym() {
  static const DlsymFn fn = lookup_real_dlsym();
  return fn;
}

void* next_symbol_after(const void* caller, const char* name) {
  link_map* self = object_of(caller);
  if (self == nullptr) return real_dlsym()(RTLD_DEFAULT, name);
  for (link_map* object = self->l_next; object != nullptr; object = object->l_next) {
    void* symbol = real_dlsym()(object, name);
    // dlsym on a handle also searches that object's dependencies; RTLD_NEXT wants the object.
    if (symbol != nullptr && object_of(symbol) == object) return symbol;
  }
  return nullptr;
}

void* find_runtime_function(const char* name) {
  if (void* fn = real_dlsym()(RTLD_NEXT, name)) return fn;
  return find_loaded_symbol("libcudart.so", name);
}

void* find_nccl_function(const char* name) {
  if (void* fn = real_dlsym()(RTLD_NEXT, name)) return fn;
  return find_loaded_symbol("libnccl.so", name);
}

void* find_loaded_symbol(const char* library_fragment, const char* name) {
  return core::find_loaded_symbol(library_fragment, name, real_dlsym());
}

void* libcuda_handle() {
  static void* const handle = [] {
    void* h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    return h != nullptr ? h : dlopen("libcuda.so.1", RTLD_LAZY);
  }();
  return handle;
}

void* find_driver_function(const char* name) {
  void* handle = libcuda_handle();
  return handle != nullptr ? real_dlsym()(handle, name) : nullptr;
}

}  // namespace deepum::cuda
