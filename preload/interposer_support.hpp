// What the runtime and driver interposers share: the session gate, limit resolution, logging.
#pragma once

#include <cstdint>
#include <string>

#include "deepum/config/limits.hpp"
#include "deepum/config/validate.hpp"
#include "deepum/core/session.hpp"
#include "framework_memory.hpp"

namespace deepum::preload {

// Row alignment for pitched allocations: what cudaMallocPitch returns on current GPUs, and a
// multiple of every texture pitch alignment CUDA reports.
inline constexpr std::size_t kPitchAlignment = 512;

// The session when deepum manages this call, nullptr when the call must pass through (config
// error, disabled). Marks the process as a CUDA user so the exit report is written.
inline core::Session* managing_session() noexcept {
  core::Session& session = core::Session::instance();
  session.mark_used();
  return session.active() ? &session : nullptr;
}

// Resolves `device`'s limits at its first allocation. `query_memory(&memory)` returns an empty
// string on success or the CUDA error's description; on failure the caller passes the call through
// so the program gets the real error (no device, no driver) from CUDA itself. The query runs with no
// lock held; the first thread to get an answer resolves and says so, with any setting that has no
// effect on this device.
template <typename QueryMemory>
bool ensure_limits_resolved(core::Session& session, int device, QueryMemory&& query_memory) {
  core::AllocationService& allocations = session.allocations();
  if (allocations.limits_resolved(device)) return true;
  config::DeviceMemory memory;
  const std::string error = query_memory(&memory);
  if (!error.empty()) {
    if (session.first_time(core::OnceNotice::no_device)) {
      core::logger().warn("no usable CUDA device ({}): passing calls through until one is", error);
    }
    return false;
  }
  if (allocations.resolve_limits_once(device, memory)) {
    const config::ResolvedLimits limits = config::resolve_limits(session.config(), memory);
    core::logger().info(
        "managing GPU allocations as unified memory on device {}: allocation limit {}, resident limit {}{} "
        "(device has {}, {} free)",
        device, core::format_bytes(limits.alloc_bytes), core::format_bytes(limits.resident_bytes),
        !limits.held                ? ", not held"
        : limits.resident_automatic ? " (automatic: the free memory less a margin)"
                                    : "",
        core::format_bytes(memory.total_bytes), core::format_bytes(memory.free_bytes));
    for (const std::string& note : config::limit_notes(session.config_load(), limits, device))
      core::logger().warn("{}", note);
    say_framework_notices(session);
  }
  return true;
}

inline void log_refusal(const core::Refusal& refusal) {
  core::logger().info("{} of {} refused: {} of the {} allocation limit in use (alloc_limit)",
                      core::api_name(refusal.api), core::format_bytes(refusal.requested_bytes),
                      core::format_bytes(refusal.in_use_bytes), core::format_bytes(refusal.limit_bytes));
}

// Where a managed allocation cannot be exported through CUDA IPC: say why, once.
inline void explain_ipc_failure(core::Session& session, const void* pointer) {
  if (session.registry().find_containing(reinterpret_cast<std::uintptr_t>(pointer)) &&
      session.first_time(core::OnceNotice::ipc_on_managed)) {
    core::logger().warn(
        "IPC handle requested for {} failed: deepum made it managed memory, which CUDA cannot export "
        "through IPC; run this process with DEEPUM_ENABLED=0 if it must share GPU memory",
        pointer);
  }
}

}  // namespace deepum::preload
