// HintExecutor: the one seam through which deepum's decisions reach the driver. The CUDA
// implementation lives in executor/; tests and the simulator use their own.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "deepum/core/residency_map.hpp"

namespace deepum::core {

class HintExecutor {
 public:
  virtual ~HintExecutor() = default;
  // Moves the ranges to host memory and returns once they are there; false if the driver refused.
  virtual bool evict_to_host(std::span<const AddressRange> ranges) = 0;
  // Device memory in use on the whole GPU now, as the driver reports it; nullopt if unknown.
  virtual std::optional<std::uint64_t> device_used_bytes() = 0;
};

}  // namespace deepum::core
