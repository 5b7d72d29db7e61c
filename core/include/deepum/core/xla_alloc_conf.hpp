// XLA (JAX's compiler and runtime) keeps device memory in its BFC caching allocator, whose regions
// come from cuMemCreate/cuMemMap in current jaxlib (cuMemAlloc in older ones). cuMemCreate memory is
// physical: deepum cannot manage it. With TF_FORCE_UNIFIED_MEMORY=1 the same BFC allocator takes
// its regions from cuMemAllocManaged instead, which deepum intercepts, so JAX's memory becomes
// deepum's with XLA's caching unchanged. deepum sets that at load, before Python reads its
// environment, unless the user chose XLA's allocator themselves; then it says why JAX is not managed.
//
// Preallocation: XLA sizes its pool from cuMemGetInfo, which deepum answers with the allocation
// limit, and under unified memory uses max(1, XLA_PYTHON_CLIENT_MEM_FRACTION) of it, so XLA's cap
// is deepum's allocation limit whatever the fraction below 1. Preallocated, the pool would be one
// range as large as the limit, and every launch would seem to need the rest of it (deepum sees
// XLA's regions, not its buffers). deepum turns preallocation off, so regions grow as XLA needs
// them. The fraction is left alone.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace deepum::core {

struct EnvironmentChange {
  std::string variable;
  std::string value;
  bool operator==(const EnvironmentChange&) const = default;
};

struct XlaSteering {
  std::vector<EnvironmentChange> changes;  // to set before the program reads its environment
  std::vector<std::string> notices;        // to say once the process uses CUDA, one line each
  std::string blocked_by;                  // VAR="value" that kept JAX unmanaged; empty if none
};

// A variable's value, nullptr when unset (getenv's contract).
using EnvironmentLookup = std::function<const char*(const char*)>;

// What to set and what to say, given the environment. Pure: the caller applies the changes.
XlaSteering plan_xla_steering(const EnvironmentLookup& getenv);

// The variables deepum sets (TF_FORCE_UNIFIED_MEMORY=1, XLA_PYTHON_CLIENT_PREALLOCATE=false), as
// said where they take effect: "TF_FORCE_UNIFIED_MEMORY=1, XLA_PYTHON_CLIENT_PREALLOCATE=false".
std::string describe_changes(const std::vector<EnvironmentChange>& changes);

// A cuMemCreate at least this large is a framework's pool or buffers, worth a warning.
inline constexpr std::uint64_t kLargePhysicalAllocation = std::uint64_t{256} << 20;

// Which frameworks the process has loaded, as the likely owners of physical memory.
struct LoadedFrameworks {
  bool jax = false;
  bool pytorch = false;
  bool nccl = false;
};

// The one warning for the first large cuMemCreate: its size, the likely framework and the setting
// behind it. `xla_blocked_by` is XlaSteering::blocked_by (empty when deepum steered XLA).
std::string physical_allocation_warning(std::uint64_t bytes, const LoadedFrameworks& loaded,
                                        std::string_view xla_blocked_by);

}  // namespace deepum::core
