#include "deepum/cupti_tracer/function_layouts.hpp"

#include <memory>

namespace deepum::cupti_tracer {
namespace {

struct DriverQuery {
  const DriverApi* driver;
  std::uint64_t handle;
  FunctionLayouts::Handle kind;
};

ParamQuery query_driver(void* context, std::size_t index, std::size_t* offset, std::size_t* size) noexcept {
  const auto* q = static_cast<const DriverQuery*>(context);
  const CUresult result =
      q->kind == FunctionLayouts::Handle::kernel
          ? q->driver->kernel_get_param_info(reinterpret_cast<CUkernel>(q->handle), index, offset, size)
          : q->driver->func_get_param_info(reinterpret_cast<CUfunction>(q->handle), index, offset, size);
  if (result == CUDA_SUCCESS) return ParamQuery::ok;
  return result == CUDA_ERROR_INVALID_VALUE ? ParamQuery::past_end : ParamQuery::failed;
}

// Parameter 0 through the call for `kind`: CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (no parameter 0:
// the kernel takes none) or the driver's refusal.
CUresult ask_first(const DriverApi& driver, std::uint64_t handle, FunctionLayouts::Handle kind) {
  std::size_t offset = 0, size = 0;
  if (kind == FunctionLayouts::Handle::kernel) {
    return driver.kernel_get_param_info != nullptr
               ? driver.kernel_get_param_info(reinterpret_cast<CUkernel>(handle), 0, &offset, &size)
               : CUDA_ERROR_NOT_SUPPORTED;
  }
  return driver.func_get_param_info != nullptr
             ? driver.func_get_param_info(reinterpret_cast<CUfunction>(handle), 0, &offset, &size)
             : CUDA_ERROR_NOT_SUPPORTED;
}

}  // namespace

void FunctionLayouts::compute(std::uint64_t handle, Handle kind, ParamLayout& layout) const noexcept {
  // A handle of the other kind than its getter says (cudart casts CUkernel to CUfunction) is asked
  // the other way.
  const Handle other = kind == Handle::kernel ? Handle::function : Handle::kernel;
  CUresult first = ask_first(driver_, handle, kind);
  if (first != CUDA_SUCCESS && first != CUDA_ERROR_INVALID_VALUE) {
    const CUresult second = ask_first(driver_, handle, other);
    if (second == CUDA_SUCCESS || second == CUDA_ERROR_INVALID_VALUE) {
      kind = other;
      first = second;
    }
  }
  layout.params.clear();
  layout.status = LayoutStatus::unknown;
  layout.source = LayoutSource::none;
  if (first == CUDA_ERROR_INVALID_VALUE) {
    layout.status = LayoutStatus::known;  // no parameter 0: the kernel takes none
  } else if (first == CUDA_SUCCESS) {
    DriverQuery query{&driver_, handle, kind};
    try {
      layout.status = build_param_layout({&query, &query_driver}, layout.params);
    } catch (...) {  // out of memory for the vector: unknown
      layout.params.clear();
      layout.status = LayoutStatus::unknown;
    }
  }
  if (layout.status == LayoutStatus::known)
    layout.source = kind == Handle::kernel ? LayoutSource::kernel : LayoutSource::function;
}

void FunctionLayouts::learn(std::uint64_t handle, Handle kind, std::uint64_t owner) noexcept {
  if (handle == 0) return;
  try {
    {
      std::lock_guard lock(owners_mutex_);
      const auto it = learned_.find(handle);
      const ParamLayout* cached = cache_.find(handle);
      if (it != learned_.end() && it->second.owner == owner && cached != nullptr &&
          cached->status == LayoutStatus::known) {
        already_known_.fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    auto layout = std::make_unique<ParamLayout>();
    layout->function = handle;
    layout->attempts = LayoutCache::kMaxAttempts;  // asked once; never asked again at a launch
    compute(handle, kind, *layout);                // the driver, with no lock held
    auto& counter = layout->source == LayoutSource::kernel     ? from_kernel_
                    : layout->source == LayoutSource::function ? from_function_
                                                               : unknown_;
    counter.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(owners_mutex_);
    cache_.put(std::move(layout));
    const auto [it, inserted] = learned_.try_emplace(handle, Learned{owner, kind});
    if (!inserted && it->second.owner == owner) return;
    it->second = {owner, kind};
    functions_of_[owner].push_back(handle);
  } catch (...) {
    // Out of memory: this function's launches are scanned as unreadable, nothing else is lost.
  }
}

void FunctionLayouts::forget(std::uint64_t handle) noexcept {
  try {
    auto unknown = std::make_unique<ParamLayout>();
    unknown->function = handle;
    unknown->attempts = LayoutCache::kMaxAttempts;
    cache_.put(std::move(unknown));
  } catch (...) {
    // Out of memory: the stale layout stays; a handle reused for another function is learned again
    // by the getter that hands it out.
  }
  learned_.erase(handle);
}

void FunctionLayouts::forget_owner(std::uint64_t owner) noexcept {
  std::lock_guard lock(owners_mutex_);
  const auto it = functions_of_.find(owner);
  if (it == functions_of_.end()) return;
  for (std::uint64_t handle : it->second) {
    const auto learned = learned_.find(handle);
    if (learned != learned_.end() && learned->second.owner == owner) forget(handle);
  }
  functions_of_.erase(it);
  unloads_.fetch_add(1, std::memory_order_relaxed);
}

void FunctionLayouts::forget_context_functions() noexcept {
  std::lock_guard lock(owners_mutex_);
  std::vector<std::uint64_t> gone;
  try {
    for (const auto& [handle, learned] : learned_) {
      if (learned.kind == Handle::function) gone.push_back(handle);
    }
  } catch (...) {
    return;  // out of memory: stale layouts stay until their handles are handed out again
  }
  for (std::uint64_t handle : gone) forget(handle);
}

const ParamLayout* FunctionLayouts::find(std::uint64_t function) const noexcept {
  const ParamLayout* layout = cache_.find(function);
  return layout != nullptr && layout->status == LayoutStatus::known ? layout : nullptr;
}

bool FunctionLayouts::first_launch(std::uint64_t function) noexcept {
  const ParamLayout* layout = cache_.find(function);
  if (layout == nullptr) {
    try {
      // Never learned (a handle from no getter deepum sees): noted as unknown, once.
      layout =
          cache_.get(function, [](ParamLayout& unknown) { unknown.status = LayoutStatus::unknown; }).layout;
    } catch (...) {
      return false;  // out of memory: the name goes unreported
    }
  }
  return layout != nullptr && !layout->named.exchange(true, std::memory_order_relaxed);
}

FunctionLayoutStats FunctionLayouts::stats() const noexcept {
  FunctionLayoutStats s;
  s.functions = cache_.size();
  s.from_function = from_function_.load(std::memory_order_relaxed);
  s.from_kernel = from_kernel_.load(std::memory_order_relaxed);
  s.unknown = unknown_.load(std::memory_order_relaxed);
  s.unloads = unloads_.load(std::memory_order_relaxed);
  s.already_known = already_known_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace deepum::cupti_tracer
