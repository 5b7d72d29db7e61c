// The table of driver interposers that dlsym and cuGetProcAddress substitute for libcuda's own.
#pragma once

#include <span>

#include "deepum/core/entry_point_table.hpp"

namespace deepum::preload {

struct DriverEntryPoint {
  core::EntryPointSpec spec;
  void* interposer;
  void (*adopt_real)(void* real_function);  // tells the interposer where the real function is
};

std::span<const DriverEntryPoint> driver_entry_points();

}  // namespace deepum::preload
