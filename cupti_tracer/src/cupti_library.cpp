#include "deepum/cupti_tracer/cupti_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <type_traits>

#include "deepum/core/loaded_objects.hpp"

namespace deepum::cupti_tracer {
namespace {

constexpr const char* kSonames[] = {"libcupti.so.13", "libcupti.so"};

std::string directory_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string{} : std::string(path.substr(0, slash));
}

bool is_directory(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

struct LoadedObjects {
  std::vector<std::string> cupti;        // full paths of loaded libcupti.so* copies
  std::vector<std::string> cudart_dirs;  // folders of loaded libcudart.so* copies
};

std::string_view file_name_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Listed by core::loaded_objects_matching, which neither allocates nor calls the loader while
// glibc holds its object list: an allocator that takes a lock another thread holds inside dlopen
// (or that unwinds stacks through that list, as profiling allocators do) would deadlock there.
LoadedObjects collect_loaded() {
  LoadedObjects objects;
  for (std::string& path : core::loaded_objects_matching("libcupti.so")) {
    if (file_name_of(path).starts_with("libcupti.so")) objects.cupti.push_back(std::move(path));
  }
  for (const std::string& path : core::loaded_objects_matching("libcudart.so")) {
    if (!file_name_of(path).starts_with("libcudart.so")) continue;
    std::string dir = directory_of(path);
    if (!dir.empty()) objects.cudart_dirs.push_back(std::move(dir));
  }
  return objects;
}

void append_unique(std::vector<std::string>& list, std::string item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(std::move(item));
}

}  // namespace

CuptiLibrary::CuptiLibrary(std::string configured_path) : configured_path_(std::move(configured_path)) {}

std::vector<std::string> CuptiLibrary::candidate_paths(const std::string& configured_path,
                                                       const std::vector<std::string>& cudart_dirs) {
  std::vector<std::string> out;
  auto add_folder = [&out](const std::string& dir) {
    for (const char* soname : kSonames) append_unique(out, dir + "/" + soname);
  };
  if (!configured_path.empty()) {
    if (is_directory(configured_path)) {
      add_folder(configured_path);
    } else {
      append_unique(out, configured_path);
    }
  }
  for (const char* soname : kSonames) append_unique(out, soname);
  for (const std::string& dir : cudart_dirs) {
    add_folder(dir);
    // pip wheels: site-packages/nvidia/cuda_runtime/lib and site-packages/nvidia/cuda_cupti/lib
    // (CUDA 12 wheels); CUDA 13 wheels put everything in one folder, covered by the line above.
    add_folder(dir + "/../../cuda_cupti/lib");
  }
  add_folder("/usr/local/cuda/extras/CUPTI/lib64");
  add_folder("/usr/local/cuda/lib64");
  return out;
}

bool CuptiLibrary::load(DlsymFn dlsym_fn) {
  if (handle_ != nullptr) return true;
  error_.clear();
  if (dlsym_fn == nullptr) {
    error_ = "no dlsym function was given";
    return false;
  }
  const LoadedObjects objects = collect_loaded();

  auto try_open = [&](const std::string& candidate, int flags) -> bool {
    dlerror();
    void* handle = dlopen(candidate.c_str(), flags);
    if (handle == nullptr) {
      const char* why = dlerror();
      error_ += candidate + ": " + (why != nullptr ? why : "not found") + "\n";
      return false;
    }
    std::string missing;
    if (!resolve(handle, dlsym_fn, missing)) {
      error_ += candidate + ": lacks " + missing + "\n";
      api_ = CuptiApi{};
      dlclose(handle);
      return false;
    }
    handle_ = handle;
    Dl_info info{};
    // The real file, when the loader found the library through its search path.
    if (dladdr(reinterpret_cast<void*>(api_.subscribe), &info) != 0 && info.dli_fname != nullptr) {
      path_ = info.dli_fname;
    } else {
      path_ = candidate;
    }
    return true;
  };

  // 1. A copy the program already loaded: use it, never a second one.
  for (const std::string& loaded_path : objects.cupti) {
    if (try_open(loaded_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) break;
  }
  // 2-4.
  if (handle_ == nullptr) {
    for (const std::string& candidate : candidate_paths(configured_path_, objects.cudart_dirs)) {
      if (try_open(candidate, RTLD_NOW | RTLD_LOCAL)) break;
    }
  }
  if (handle_ == nullptr) return false;
  error_.clear();
  if (api_.get_version != nullptr) {
    uint32_t version = 0;
    if (api_.get_version(&version) == CUPTI_SUCCESS) version_ = version;
  }
  return true;
}

bool CuptiLibrary::resolve(void* handle, DlsymFn dlsym_fn, std::string& missing) {
  auto bind = [&](auto& slot, const char* name, bool required) {
    void* symbol = dlsym_fn(handle, name);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(symbol);
    if (symbol == nullptr && required) missing += missing.empty() ? name : std::string(", ") + name;
  };
  bind(api_.subscribe, "cuptiSubscribe", true);
  bind(api_.subscribe_v2, "cuptiSubscribe_v2", false);
  bind(api_.unsubscribe, "cuptiUnsubscribe", true);
  bind(api_.enable_callback, "cuptiEnableCallback", true);
  bind(api_.activity_enable, "cuptiActivityEnable", true);
  bind(api_.activity_disable, "cuptiActivityDisable", true);
  bind(api_.activity_register_callbacks, "cuptiActivityRegisterCallbacks", true);
  bind(api_.activity_configure_unified_memory_counter, "cuptiActivityConfigureUnifiedMemoryCounter", true);
  bind(api_.activity_flush_all, "cuptiActivityFlushAll", true);
  bind(api_.activity_flush_period, "cuptiActivityFlushPeriod", false);
  bind(api_.activity_get_next_record, "cuptiActivityGetNextRecord", true);
  bind(api_.activity_get_num_dropped_records, "cuptiActivityGetNumDroppedRecords", true);
  bind(api_.activity_set_attribute, "cuptiActivitySetAttribute", false);
  bind(api_.get_timestamp, "cuptiGetTimestamp", true);
  bind(api_.get_result_string, "cuptiGetResultString", true);
  bind(api_.get_version, "cuptiGetVersion", false);
  return missing.empty();
}

std::string CuptiLibrary::describe(CUptiResult result) const {
  const char* text = nullptr;
  if (api_.get_result_string != nullptr && api_.get_result_string(result, &text) == CUPTI_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return "CUPTI error " + std::to_string(static_cast<int>(result));
}

}  // namespace deepum::cupti_tracer
