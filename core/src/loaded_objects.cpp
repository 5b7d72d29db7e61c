#include "deepum/core/loaded_objects.hpp"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstring>

namespace deepum::core {
namespace {

// More objects matching one fragment than any program loads; bounds the walks below.
constexpr std::size_t kMaxMatches = 64;

// The `wanted`-th loaded object whose path contains `fragment` (counting from 0), copied out.
struct NthMatch {
  const char* fragment = nullptr;
  std::size_t wanted = 0;
  std::size_t seen = 0;
  bool found = false;
  bool too_long = false;  // its path does not fit `path`; skipped
  char path[PATH_MAX] = {};
};

// Runs under glibc's list lock: string functions and a copy only, no loader call, no allocation.
int copy_nth_match(dl_phdr_info* info, size_t, void* data) {
  auto* match = static_cast<NthMatch*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || name[0] == '\0' || std::strstr(name, match->fragment) == nullptr) return 0;
  if (match->seen++ != match->wanted) return 0;
  match->found = true;
  const std::size_t length = strnlen(name, sizeof match->path);
  if (length == sizeof match->path) {
    match->too_long = true;
  } else {
    std::memcpy(match->path, name, length + 1);
  }
  return 1;
}

}  // namespace

// One walk per match, each copying a single path: nothing is allocated inside the walk however
// many objects match. A library loaded or unloaded between two walks shifts the count by one,
// which at worst names one object twice or misses one that arrived meanwhile.
std::vector<std::string> loaded_objects_matching(const char* fragment) {
  std::vector<std::string> paths;
  for (std::size_t index = 0; index < kMaxMatches; ++index) {
    NthMatch match;
    match.fragment = fragment;
    match.wanted = index;
    dl_iterate_phdr(copy_nth_match, &match);
    if (!match.found) break;
    if (!match.too_long) paths.emplace_back(match.path);
  }
  return paths;
}

void* find_loaded_symbol(const char* fragment, const char* name, DlsymFn dlsym_fn) {
  if (dlsym_fn == nullptr) return nullptr;
  for (const std::string& path : loaded_objects_matching(fragment)) {
    // RTLD_NOLOAD: only an object still loaded; it takes a reference, given back below (the
    // library stays loaded by its owner).
    void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (handle == nullptr) continue;
    void* symbol = dlsym_fn(handle, name);
    dlclose(handle);
    if (symbol != nullptr) return symbol;
  }
  return nullptr;
}

}  // namespace deepum::core
