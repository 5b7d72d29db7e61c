// The limits in bytes once the device is known, and whether deepum holds the resident limit. Pure:
// the device's memory is asked of the driver by the caller (the interposers, at the first
// allocation on the device).
#pragma once

#include <cstdint>
#include <optional>

#include "deepum/config/config.hpp"

namespace deepum::config {

// A device's memory as the driver reports it (cuMemGetInfo): what is free (less what this and
// every other process hold) and its physical total.
struct DeviceMemory {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
};

struct ResolvedLimits {
  std::uint64_t alloc_bytes = 0;
  std::uint64_t resident_bytes = 0;
  bool resident_automatic = false;  // resident_limit 0, resolved from the device's memory
  // Whether deepum holds resident_bytes: it is below the device's memory (the driver never evicts
  // by itself below it) and mode is not driver.
  bool held = false;
};

// What the automatic resident limit leaves free of the device's free memory at start: room for
// what deepum does not count and that arrives later (deepum's eviction thread's own context, the
// modules, kernel local memory and graph pools a program loads after its first allocation, another
// process growing). Residency past the physical memory costs far more (the driver pages on faults,
// a 4 KiB page at a time) than a limit set a little low (a few more moves each step), so the margin
// is generous: a sixteenth of the device's memory, at least 1 GiB, and at most half of what is free.
std::uint64_t capacity_margin(const DeviceMemory& memory);

// alloc_limit and resident_limit in bytes on a device. An automatic resident_limit (0) is the
// device's free memory less capacity_margin() where the allocation limit exceeds the device's total
// (a program allocating past the GPU gets deepum's moves, not the driver's fault-driven paging),
// and the device's total otherwise (nothing to hold: deepum then costs the program nothing).
ResolvedLimits resolve_limits(const Config& config, const DeviceMemory& memory);

// Whether deepum will hold a resident limit, where the configuration alone tells (mode driver, or
// limits given as percentages); nullopt where it depends on the device's memory (a size in bytes).
std::optional<bool> holds_resident_limit(const Config& config);

}  // namespace deepum::config
