#include "deepum/core/xla_alloc_conf.hpp"

#include <utility>

#include "deepum/config/printable.hpp"
#include "deepum/core/statistics.hpp"

namespace deepum::core {
namespace {

constexpr const char* kAllocator = "XLA_PYTHON_CLIENT_ALLOCATOR";
constexpr const char* kTfAllocator = "TF_GPU_ALLOCATOR";
constexpr const char* kUnifiedMemory = "TF_FORCE_UNIFIED_MEMORY";
constexpr const char* kPreallocate = "XLA_PYTHON_CLIENT_PREALLOCATE";

// ASCII only, whatever locale the program has set.
std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

// VAR="value", printable and cut short, so a notice stays one line whatever the variable held.
std::string quoted(std::string_view variable, std::string_view value) {
  constexpr std::size_t kMaxShown = 200;
  std::string shown = config::printable(value.substr(0, kMaxShown));
  if (value.size() > kMaxShown) shown += "...";
  return config::printable(variable) + "=\"" + shown + "\"";
}

// The user's setting that keeps JAX's memory from deepum (VAR="value") and why; empty if none.
struct Blocker {
  std::string setting;
  std::string reason;
};

Blocker find_blocker(const EnvironmentLookup& getenv) {
  // jaxlib reads the allocator name lowercased; "default" and "bfc" are the BFC allocator.
  if (const char* allocator = getenv(kAllocator)) {
    const std::string name = lowercase(allocator);
    if (name != "default" && name != "bfc") {
      return {quoted(kAllocator, allocator),
              "it selects an allocator other than XLA's BFC allocator, the only one deepum steers to "
              "unified memory"};
    }
  }
  if (const char* tf_allocator = getenv(kTfAllocator);
      tf_allocator && lowercase(tf_allocator) == "cuda_malloc_async") {
    return {quoted(kTfAllocator, tf_allocator), "it replaces XLA's BFC allocator with CUDA's memory pools"};
  }
  // XLA reads TF_FORCE_UNIFIED_MEMORY as a boolean ("1"/"true", any case); anything else is false.
  if (const char* unified = getenv(kUnifiedMemory); unified && *unified != '\0') {
    const std::string value = lowercase(unified);
    if (value != "1" && value != "true") {
      return {
          quoted(kUnifiedMemory, unified),
          "XLA keeps its BFC allocator on device memory, which current jaxlib allocates with cuMemCreate"};
    }
  }
  return {};
}

}  // namespace

XlaSteering plan_xla_steering(const EnvironmentLookup& getenv) {
  XlaSteering steering;
  if (Blocker blocker = find_blocker(getenv); !blocker.setting.empty()) {
    steering.notices.push_back(blocker.setting + ": JAX's memory will not be managed: " + blocker.reason +
                               "; unset it to let deepum manage JAX's memory");
    steering.blocked_by = std::move(blocker.setting);
    return steering;
  }
  const char* unified = getenv(kUnifiedMemory);
  if (unified == nullptr || *unified == '\0') steering.changes.push_back({kUnifiedMemory, "1"});
  // jaxlib treats an empty value as unset and "false", "False" or "0" as false.
  const char* preallocate = getenv(kPreallocate);
  if (preallocate == nullptr || *preallocate == '\0') {
    steering.changes.push_back({kPreallocate, "false"});
  } else if (std::string_view value = preallocate; value != "false" && value != "False" && value != "0") {
    steering.notices.push_back(quoted(kPreallocate, preallocate) +
                               ": XLA will take deepum's whole allocation limit as one range at its first "
                               "allocation, so every launch seems to need the rest of that range and deepum "
                               "moves far more memory; set it to false");
  }
  return steering;
}

std::string describe_changes(const std::vector<EnvironmentChange>& changes) {
  std::string out;
  for (const EnvironmentChange& change : changes) {
    if (!out.empty()) out += ", ";
    out += change.variable + "=" + change.value;
  }
  return out;
}

std::string physical_allocation_warning(std::uint64_t bytes, const LoadedFrameworks& loaded,
                                        std::string_view xla_blocked_by) {
  std::string owner;
  if (loaded.jax && !xla_blocked_by.empty()) {
    owner = "JAX's: XLA's allocator, kept off unified memory by " + config::printable(xla_blocked_by);
  } else if (loaded.jax) {
    owner = "JAX's: XLA's collective memory, or a jaxlib that does not read TF_FORCE_UNIFIED_MEMORY";
  } else if (loaded.pytorch) {
    owner = "PyTorch's: NCCL or symmetric-memory buffers (expandable_segments is switched off at load)";
  } else if (loaded.nccl) {
    owner = "NCCL's buffers";
  } else {
    owner = "from a library deepum does not recognise";
  }
  return "cuMemCreate of " + format_bytes(bytes) +
         ": physical GPU memory that deepum cannot manage or oversubscribe, likely " + owner;
}

}  // namespace deepum::core
