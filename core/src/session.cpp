#include "deepum/core/session.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <optional>
#include <sstream>

#include "deepum/config/printable.hpp"
#include "deepum/core/elapsed.hpp"
#include "deepum/core/output_file.hpp"

namespace deepum::core {

namespace {
std::atomic<Session*> g_session{nullptr};
}  // namespace

Session& Session::instance() {
  // Leaked on purpose: it must outlive every static destructor.
  static Session* session = [] {
    auto* created = new Session();
    g_session.store(created, std::memory_order_release);
    return created;
  }();
  return *session;
}

Session* Session::if_created() { return g_session.load(std::memory_order_acquire); }

Session::Session()
    : load_(config::load_process_config(config::this_process_environment())),
      allocations_(load_.config, stats_, registry_) {
  configure_logging(load_.config);
  if (!load_.ok()) {
    logger().error("{}", load_.error);
    logger().error("configuration rejected: deepum passes every call through untouched");
    return;
  }
  for (const std::string& warning : load_.warnings) logger().warn("{}", warning);
  if (load_.secure_execution) {
    logger().info(
        "secure-execution process (set-user-ID, set-group-ID or file capabilities): no configuration "
        "read, passing every call through");
    return;
  }
  active_ = load_.config.enabled;
  if (!active_) {
    logger().info("disabled by configuration ({}): passing every call through", load_.origin);
  } else {
    logger().debug("configuration: {}", load_.origin);
  }
}

bool Session::first_time(OnceNotice notice) {
  const std::uint64_t bit = std::uint64_t{1} << static_cast<unsigned>(notice);
  return (notices_given_.fetch_or(bit, std::memory_order_relaxed) & bit) == 0;
}

std::string process_command_line() {
  constexpr std::size_t kMax = 120;
  // Only what is shown is read: a command line can be megabytes long.
  std::array<char, kMax + 1> raw{};
  ssize_t n = -1;
  if (const int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC); fd >= 0) {
    do {
      n = ::read(fd, raw.data(), raw.size());
    } while (n < 0 && errno == EINTR);
    ::close(fd);
  }
  std::string out(raw.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  std::replace(out.begin(), out.end(), '\0', ' ');
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (out.size() > kMax) out = out.substr(0, kMax - 3) + "...";
  return config::printable(out);
}

ExitReport Session::exit_report() {
  ExitReport report;
  report.process = "pid " + std::to_string(getpid()) + ", " + process_command_line();
  report.config_origin = load_.origin;
  report.allocations = allocations_.snapshot();
  report.run_ns = ns_since(started_);
  {
    std::lock_guard lock(tracing_status_mutex_);
    report.tracing_status = tracing_status_;
    report.runtime = runtime_counters_;
  }
  if (EventPipeline* pipeline = this->pipeline()) report.tracing = pipeline->stats();
  return report;
}

void Session::write_exit_report() {
  if (!used()) return;
  const ExitReport report = exit_report();
  std::uint64_t calls = 0;
  for (const ApiCounters& counters : report.allocations.per_api) calls += counters.calls;
  if (calls == 0) return;  // nothing was intercepted (passed through, or no CUDA use): nothing to say
  if (load_.config.summary) {
    std::istringstream lines(render_summary(report));
    for (std::string line; std::getline(lines, line);) logger().info("{}", line);
  }
  if (!load_.config.stats_file.empty()) {
    const std::string path = expand_process_id(load_.config.stats_file, static_cast<long>(getpid()));
    std::string error;
    if (!write_output_file(path, render_json(report), error)) {
      logger().warn("cannot write stats_file \"{}\" ({})", path, error);
    }
  }
}

void Session::attach_pipeline(std::unique_ptr<EventPipeline> pipeline) {
  EventPipeline* expected = nullptr;
  if (pipeline_.compare_exchange_strong(expected, pipeline.get(), std::memory_order_acq_rel))
    pipeline.release();
}

void Session::set_tracing_status(std::string status) {
  std::lock_guard lock(tracing_status_mutex_);
  tracing_status_ = std::move(status);
}

void Session::set_runtime_counters(RuntimeCounters counters) {
  std::lock_guard lock(tracing_status_mutex_);
  runtime_counters_ = std::move(counters);
}

void Session::reset_after_fork() {
  // The parent's worker thread and CUPTI subscription do not exist here; stop reporting them.
  pipeline_.store(nullptr, std::memory_order_release);
  allocations_.forget_all();
  used_.store(false, std::memory_order_relaxed);
  started_ = std::chrono::steady_clock::now();
}

}  // namespace deepum::core
