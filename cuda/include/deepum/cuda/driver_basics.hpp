// The driver calls several of deepum's parts make: error text, the current context, the ranges a
// batched memory call takes, and placing a fresh range on the host.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "deepum/core/residency_map.hpp"

namespace deepum::cuda {

// The pointer and size arrays the driver's batched memory calls take.
struct BatchRanges {
  explicit BatchRanges(std::span<const core::AddressRange> ranges);
  std::vector<CUdeviceptr> pointers;
  std::vector<size_t> sizes;
};

// "cuMemPrefetchAsync: CUDA_ERROR_INVALID_VALUE (1)"; `what` may be empty.
std::string describe(const char* what, CUresult result);

// The context current on the calling thread (the program's, inside an allocation hook).
CUcontext current_context();

// Device memory in use on the whole GPU of the current context now, as the driver reports it;
// nullopt if unknown.
std::optional<std::uint64_t> device_used_bytes();

// Places a fresh range in host memory and waits for it, from the allocating thread (its context is
// current). The GPU's first touch then arrives as a migration CUPTI reports, so residency is
// counted exactly. An empty string on success, else what failed.
std::string place_on_host(std::uint64_t address, std::uint64_t bytes);

}  // namespace deepum::cuda
