// HookScope: only the outermost intercepted call on a thread is deepum's. When the runtime's
// cudaFree calls the driver's cuMemFree_v2, which we also intercept, the inner call passes through.
#pragma once

namespace deepum::preload {

class HookScope {
 public:
  HookScope() noexcept : outermost_(depth_++ == 0) {}
  ~HookScope() { --depth_; }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

  bool outermost() const noexcept { return outermost_; }

 private:
  static thread_local int depth_;
  bool outermost_;
};

}  // namespace deepum::preload
