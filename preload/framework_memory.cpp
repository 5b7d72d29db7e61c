#include "framework_memory.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "deepum/config/config.hpp"
#include "deepum/core/loaded_objects.hpp"
#include "deepum/core/log.hpp"
#include "deepum/core/xla_alloc_conf.hpp"

namespace deepum::preload {
namespace {

// Written by the library constructor before any other thread runs; only read after it. Never
// destroyed: hooks run during exit too.
core::XlaSteering& xla_steering() {
  static auto* steering = new core::XlaSteering();
  return *steering;
}

// What the session will decide at the first CUDA call, decided now without creating it: a
// session here would log and open its files in every process, CUDA user or not.
bool deepum_will_manage() {
  const config::ConfigLoad load = config::load_process_config(config::this_process_environment());
  return load.ok() && !load.secure_execution && load.config.enabled;
}

bool loaded(const char* fragment) { return !core::loaded_objects_matching(fragment).empty(); }

core::LoadedFrameworks loaded_frameworks() {
  return {.jax = loaded("jaxlib") || loaded("jax_plugins") || loaded("xla_cuda"),
          .pytorch = loaded("libtorch_cuda"),
          .nccl = loaded("libnccl")};
}

}  // namespace

void steer_xla_allocator_at_load() {
  // secure_getenv: a secure-execution process reads no configuration (deepum_will_manage says no).
  core::XlaSteering steering = core::plan_xla_steering([](const char* name) { return secure_getenv(name); });
  if (steering.changes.empty() && steering.notices.empty()) return;
  if (!deepum_will_manage()) return;
  for (const core::EnvironmentChange& change : steering.changes) {
    setenv(change.variable.c_str(), change.value.c_str(), 1);
  }
  xla_steering() = std::move(steering);
}

void say_framework_notices(core::Session& session) {
  const core::XlaSteering& xla = xla_steering();
  if (xla.notices.empty() || !session.first_time(core::OnceNotice::framework_settings)) return;
  for (const std::string& notice : xla.notices) {
    if (xla.blocked_by.empty()) {
      core::logger().info("{}", notice);
    } else {
      core::logger().warn("{}", notice);
    }
  }
}

void note_program_managed_allocation(core::Session& session) {
  if (!session.first_time(core::OnceNotice::program_managed_memory)) return;
  // A process started by one deepum steered has the variables already, from its parent.
  const core::XlaSteering& xla = xla_steering();
  core::logger().info(
      "cuMemAllocManaged: the program's unified memory is deepum's, under its limits{}",
      xla.changes.empty()
          ? std::string()
          : " (XLA's BFC allocator, set at load: " + core::describe_changes(xla.changes) + ")");
}

void note_physical_allocation(core::Session& session, std::uint64_t bytes) {
  if (session.first_time(core::OnceNotice::physical_allocation)) {
    core::logger().info(
        "cuMemCreate: physical GPU memory (NCCL buffers, XLA's allocator, PyTorch expandable segments) is "
        "left "
        "as it is and is not oversubscribed");
  }
  if (bytes >= core::kLargePhysicalAllocation &&
      session.first_time(core::OnceNotice::large_physical_allocation)) {
    core::logger().warn(
        "{}", core::physical_allocation_warning(bytes, loaded_frameworks(), xla_steering().blocked_by));
  }
}

}  // namespace deepum::preload
