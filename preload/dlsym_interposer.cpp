// dlsym interposer: cudart (static or shared) opens libcuda.so.1 and looks up cuGetProcAddress
// with dlsym on that handle, which LD_PRELOAD alone never sees. We answer such lookups of driver
// functions we intercept with our interposers and pass every other lookup through unchanged.
#include <dlfcn.h>

#include "deepum/core/session.hpp"
#include "deepum/cuda/real_symbols.hpp"
#include "driver_entry_points.hpp"

extern "C" __attribute__((visibility("default"))) void* dlsym(void* handle, const char* name) {
  using namespace deepum::preload;
  void* symbol = handle == RTLD_NEXT ? deepum::cuda::next_symbol_after(__builtin_return_address(0), name)
                                     : deepum::cuda::real_dlsym()(handle, name);
  // Only CUDA driver names are ours to answer; everything else returns before touching deepum.
  if (symbol == nullptr || name[0] != 'c' || name[1] != 'u') return symbol;
  const DriverEntryPoint* entry = deepum::core::find_by_exported_name(driver_entry_points(), name);
  if (entry == nullptr || symbol == entry->interposer) return symbol;
  deepum::core::Session& session = deepum::core::Session::instance();
  if (!session.active()) return symbol;
  entry->adopt_real(symbol);
  session.stats().count_entry_point_via_dlsym();
  return entry->interposer;
}
