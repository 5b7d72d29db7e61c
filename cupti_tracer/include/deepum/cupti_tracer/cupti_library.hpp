// CuptiLibrary: libcupti, loaded at run time with dlopen (libdeepum never links it), and the
// CUPTI functions the tracer calls, resolved once.
#pragma once

#include <cupti.h>

#include <string>
#include <vector>

namespace deepum::cupti_tracer {

// glibc's dlsym. libdeepum interposes dlsym, so the caller passes the real one in
// (preload::real_dlsym()).
using DlsymFn = void* (*)(void*, const char*);

// Exactly the CUPTI calls the tracer makes. Every member is required unless marked optional;
// optional ones are nullptr when the loaded libcupti lacks them.
struct CuptiApi {
  CUptiResult(CUPTIAPI* subscribe)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*) = nullptr;
  // Optional (CUPTI 12.6+): also names the subscriber already present.
  CUptiResult(CUPTIAPI* subscribe_v2)(CUpti_SubscriberHandle*, CUpti_CallbackFunc, void*,
                                      CUpti_SubscriberParams*) = nullptr;
  CUptiResult(CUPTIAPI* unsubscribe)(CUpti_SubscriberHandle) = nullptr;
  CUptiResult(CUPTIAPI* enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                         CUpti_CallbackId) = nullptr;
  CUptiResult(CUPTIAPI* activity_enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult(CUPTIAPI* activity_disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult(CUPTIAPI* activity_register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                                     CUpti_BuffersCallbackCompleteFunc) = nullptr;
  CUptiResult(CUPTIAPI* activity_configure_unified_memory_counter)(CUpti_ActivityUnifiedMemoryCounterConfig*,
                                                                   uint32_t) = nullptr;
  CUptiResult(CUPTIAPI* activity_flush_all)(uint32_t) = nullptr;
  CUptiResult(CUPTIAPI* activity_flush_period)(uint32_t) = nullptr;  // optional (CUPTI 11.1+)
  CUptiResult(CUPTIAPI* activity_get_next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult(CUPTIAPI* activity_get_num_dropped_records)(CUcontext, uint32_t, size_t*) = nullptr;
  CUptiResult(CUPTIAPI* activity_set_attribute)(CUpti_ActivityAttribute, size_t*,
                                                void*) = nullptr;  // optional
  CUptiResult(CUPTIAPI* get_timestamp)(uint64_t*) = nullptr;
  CUptiResult(CUPTIAPI* get_result_string)(CUptiResult, const char**) = nullptr;
  CUptiResult(CUPTIAPI* get_version)(uint32_t*) = nullptr;  // optional
};

class CuptiLibrary {
 public:
  // `configured_path`: a libcupti file or a folder holding one; empty for the default search.
  explicit CuptiLibrary(std::string configured_path = {});
  CuptiLibrary(const CuptiLibrary&) = delete;
  CuptiLibrary& operator=(const CuptiLibrary&) = delete;
  // Never dlcloses: CUPTI keeps threads and driver hooks alive until the process ends.
  ~CuptiLibrary() = default;

  // Finds, opens and resolves libcupti. Search order:
  //   1. a libcupti.so* already loaded in the process (PyTorch's kineto loads one): two copies of
  //      CUPTI in one process would fight over the driver's tool hooks;
  //   2. the configured path;
  //   3. "libcupti.so.13", "libcupti.so" through the dynamic loader's search path;
  //   4. next to every loaded libcudart.so* (pip CUDA wheels), that folder's
  //      ../../cuda_cupti/lib (nvidia-cuda-cupti wheel), /usr/local/cuda/extras/CUPTI/lib64 and
  //      /usr/local/cuda/lib64.
  // Returns false, with the reasons in error(), when none opens or a required function is missing.
  // Calling it again after success does nothing and returns true.
  bool load(DlsymFn dlsym_fn);

  bool loaded() const { return handle_ != nullptr; }
  const CuptiApi& api() const { return api_; }
  // The file that was opened, e.g. "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13".
  const std::string& path() const { return path_; }
  // cuptiGetVersion, or 0 when unknown.
  unsigned version() const { return version_; }
  // Every path tried and why each failed; empty after a clean first-try load.
  const std::string& error() const { return error_; }
  // cuptiGetResultString, or "CUPTI error <n>" when that is unavailable.
  std::string describe(CUptiResult result) const;

  // The candidates of steps 2-4 for a configured path and the folders of the loaded libcudart
  // copies (pure, for tests and diagnostics). Already-loaded copies are not included.
  static std::vector<std::string> candidate_paths(const std::string& configured_path,
                                                  const std::vector<std::string>& cudart_dirs);

 private:
  bool resolve(void* handle, DlsymFn dlsym_fn, std::string& missing);

  std::string configured_path_;
  void* handle_ = nullptr;
  std::string path_;
  std::string error_;
  unsigned version_ = 0;
  CuptiApi api_{};
};

}  // namespace deepum::cupti_tracer
