// Session: deepum's state for one process: its configuration, the managed-range registry, the
// allocation limit and the statistics. Created on first use and never destroyed, since hooks can
// run while the process exits.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "deepum/config/config.hpp"
#include "deepum/core/allocation_service.hpp"
#include "deepum/core/event_pipeline.hpp"
#include "deepum/core/exit_report.hpp"
#include "deepum/core/log.hpp"
#include "deepum/core/managed_registry.hpp"
#include "deepum/core/statistics.hpp"

namespace deepum::core {

// Conditions worth one log line per process, however often they occur.
enum class OnceNotice : std::size_t {
  no_device,
  ipc_on_managed,
  physical_allocation,
  placement_failed,
  context_reset,
  framework_settings,
  large_physical_allocation,
  program_managed_memory,
  count
};

class Session {
 public:
  // Loads the configuration from the environment on first call.
  static Session& instance();
  // The session if a hook has created it, else nullptr (exit and fork handlers must not create one).
  static Session* if_created();

  // Whether deepum manages allocations; false after a config error or with enabled=false, in
  // which case every hook passes its call through untouched.
  bool active() const { return active_; }
  const config::Config& config() const { return load_.config; }
  // What was read and set where: for the notes on settings that have no effect on a device.
  const config::ConfigLoad& config_load() const { return load_; }
  const std::string& config_origin() const { return load_.origin; }

  AllocationService& allocations() { return allocations_; }
  const AllocationService& allocations() const { return allocations_; }
  ManagedRegistry& registry() { return registry_; }
  Statistics& stats() { return stats_; }

  // True the first time it is called for `notice`, so the caller logs once.
  bool first_time(OnceNotice notice);

  // Whether any hook ran; the exit report is written only for processes that used CUDA.
  void mark_used() { used_.store(true, std::memory_order_relaxed); }
  bool used() const { return used_.load(std::memory_order_relaxed); }

  // Tracing, once the CUDA side has started it: the pipeline all events flow through, and one
  // line saying what the tracer could and could not do.
  EventPipeline* pipeline() { return pipeline_.load(std::memory_order_acquire); }
  void attach_pipeline(std::unique_ptr<EventPipeline> pipeline);
  void set_tracing_status(std::string status);
  // The tracer's and the engine's counters, handed over once they have stopped (at exit).
  void set_runtime_counters(RuntimeCounters counters);

  // Every figure of the run so far.
  ExitReport exit_report();
  // The exit summary to the log, and the JSON statistics file when configured.
  void write_exit_report();
  // Called in the child after fork(): the parent's ranges and counters are not the child's.
  void reset_after_fork();

 private:
  Session();

  config::ConfigLoad load_;
  bool active_ = false;
  Statistics stats_;
  ManagedRegistry registry_;
  AllocationService allocations_;
  std::atomic<bool> used_{false};
  std::atomic<EventPipeline*> pipeline_{nullptr};  // owned; never destroyed, like the session
  std::mutex tracing_status_mutex_;                // guards the two below
  std::string tracing_status_;
  std::optional<RuntimeCounters> runtime_counters_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::atomic<std::uint64_t> notices_given_{0};
};

// The program's command line, for the summary's header ("python3 train.py --steps 20").
std::string process_command_line();

}  // namespace deepum::core
