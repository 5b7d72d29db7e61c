// Process-level hooks: at load, switch off PyTorch's expandable segments and steer XLA's allocator
// to unified memory before either framework reads its settings; at exit, the summary; around fork,
// the locks and the child's fresh state.
#include <pthread.h>

#include <cstdlib>
#include <string>

#include "deepum/core/capture_gate.hpp"
#include "deepum/core/pytorch_alloc_conf.hpp"
#include "deepum/core/session.hpp"
#include "deepum/cuda/tracing_session.hpp"
#include "driver_calls.hpp"
#include "framework_memory.hpp"

namespace deepum::preload {
namespace {

void switch_off_expandable_segments() {
  static constexpr const char* kVariables[] = {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"};
  for (const char* variable : kVariables) {
    // secure_getenv: a secure-execution process reads no configuration, PyTorch's included.
    const char* value = secure_getenv(variable);
    if (value == nullptr) continue;
    std::optional<std::string> rewritten = core::without_expandable_segments(value);
    if (!rewritten) continue;
    core::Session& session = core::Session::instance();  // only now: this process will use CUDA
    if (!session.active()) return;
    const std::string original = value;
    if (rewritten->empty()) {
      unsetenv(variable);
    } else {
      setenv(variable, rewritten->c_str(), 1);
    }
    core::logger().info("{}", core::expandable_segments_notice(variable, original));
  }
}

void write_exit_report() {
  if (core::Session* session = core::Session::if_created()) session->write_exit_report();
}

void before_fork() {
  if (core::Session* session = core::Session::if_created()) session->registry().lock_for_fork();
  driver::lock_deferred_frees_for_fork();
}

void after_fork_in_parent() {
  driver::unlock_deferred_frees_after_fork(false);
  if (core::Session* session = core::Session::if_created()) session->registry().unlock_after_fork();
}

void after_fork_in_child() {
  core::capture_gate().reset_after_fork();  // the parent's captures are not the child's
  driver::unlock_deferred_frees_after_fork(true);
  cuda::abandon_tracing_after_fork();
  if (core::Session* session = core::Session::if_created()) {
    session->registry().reset_in_child();
    session->reset_after_fork();
  }
}

__attribute__((constructor)) void on_library_load() {
  switch_off_expandable_segments();
  steer_xla_allocator_at_load();
  std::atexit(write_exit_report);
  pthread_atfork(before_fork, after_fork_in_parent, after_fork_in_child);
  cuda::set_memory_reset_hook(&driver::forget_context_memory);
}

}  // namespace
}  // namespace deepum::preload
