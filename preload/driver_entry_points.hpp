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

// Every driver interposer: the memory ones (driver_interposers.cpp) and those for modules,
// captures and contexts (lifecycle_interposers.cpp).
std::span<const DriverEntryPoint> driver_entry_points();
std::span<const DriverEntryPoint> memory_entry_points();
std::span<const DriverEntryPoint> lifecycle_entry_points();

}  // namespace deepum::preload
