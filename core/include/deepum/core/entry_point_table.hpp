// Which of our driver interposers answers a driver lookup. cuGetProcAddress is asked for a base
// name ("cuMemAlloc"), a CUDA version and a stream flag, and hands out a variant (cuMemAlloc_v2,
// cuMemAllocAsync_ptsz); dlsym is asked for the exported variant name itself. Pure C++.
#pragma once

#include <climits>
#include <cstring>
#include <span>

namespace deepum::core {

enum class StreamVariant { not_applicable, legacy, per_thread };

struct EntryPointSpec {
  const char* exported_name;  // the variant's symbol in libcuda: "cuMemAlloc_v2"
  const char* proc_name;      // what cuGetProcAddress is asked for: "cuMemAlloc"
  int min_version;            // the variant is handed out for versions in [min_version, max_version)
  int max_version;
  StreamVariant stream;
};

inline constexpr int kNoMaxVersion = INT_MAX;

// The entry whose variant cuGetProcAddress(symbol, version, flags) hands out, or nullptr.
template <typename Entry>
const Entry* find_by_proc_address(std::span<const Entry> entries, const char* symbol, int cuda_version,
                                  bool per_thread_stream) {
  const StreamVariant wanted = per_thread_stream ? StreamVariant::per_thread : StreamVariant::legacy;
  for (const Entry& entry : entries) {
    const EntryPointSpec& spec = entry.spec;
    if (std::strcmp(spec.proc_name, symbol) != 0) continue;
    if (cuda_version < spec.min_version || cuda_version >= spec.max_version) continue;
    if (spec.stream != StreamVariant::not_applicable && spec.stream != wanted) continue;
    return &entry;
  }
  return nullptr;
}

// The entry exported under `name` (a dlsym lookup), or nullptr.
template <typename Entry>
const Entry* find_by_exported_name(std::span<const Entry> entries, const char* name) {
  for (const Entry& entry : entries) {
    if (std::strcmp(entry.spec.exported_name, name) == 0) return &entry;
  }
  return nullptr;
}

}  // namespace deepum::core
