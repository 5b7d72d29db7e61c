#include "deepum/core/log.hpp"

#include <spdlog/sinks/base_sink.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "deepum/config/printable.hpp"
#include "deepum/core/output_file.hpp"

namespace deepum::core {
namespace {

constexpr const char* kPattern = "[deepum %P %l] %v";

spdlog::level::level_enum to_spdlog(config::LogLevel level) {
  switch (level) {
    case config::LogLevel::trace:
      return spdlog::level::trace;
    case config::LogLevel::debug:
      return spdlog::level::debug;
    case config::LogLevel::info:
      return spdlog::level::info;
    case config::LogLevel::warn:
      return spdlog::level::warn;
    case config::LogLevel::error:
      return spdlog::level::err;
    case config::LogLevel::off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

// Writes each record to a descriptor as exactly one line: control characters in the message (a
// newline in an environment variable, say) are escaped, so nothing deepum logs, whatever text from
// outside it holds, can add a line of its own to the log. One write(2) per record, so records from
// the processes of a job appending to one log file do not interleave.
class OneLineSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit OneLineSink(int fd) : fd_(fd) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    escaped_.clear();
    config::append_printable(std::string_view(msg.payload.data(), msg.payload.size()), escaped_);
    spdlog::details::log_msg line = msg;
    line.payload = escaped_;
    spdlog::memory_buf_t formatted;
    formatter_->format(line, formatted);
    write_all(fd_, std::string_view(formatted.data(), formatted.size()));  // a lost line is not an error
  }

  void flush_() override {}  // nothing is buffered

 private:
  int fd_;
  std::string escaped_;  // reused under the sink's mutex
};

std::shared_ptr<spdlog::logger> make_logger(int fd, spdlog::level::level_enum level) {
  auto log = std::make_shared<spdlog::logger>("deepum", std::make_shared<OneLineSink>(fd));
  log->set_pattern(kPattern);
  log->set_level(level);
  return log;
}

// Never destroyed: hooks may log after static destructors have run.
std::atomic<std::shared_ptr<spdlog::logger>*> g_logger{nullptr};

// Loggers configure_logging replaced: another thread may still be writing through one, so each is
// kept alive (and reachable, for leak checkers) for the life of the process.
struct RetiredLogger {
  std::shared_ptr<spdlog::logger>* logger;
  RetiredLogger* next;
};
std::atomic<RetiredLogger*> g_retired{nullptr};

void retire(std::shared_ptr<spdlog::logger>* logger) {
  if (logger == nullptr) return;
  auto* node = new RetiredLogger{logger, g_retired.load(std::memory_order_relaxed)};
  while (!g_retired.compare_exchange_weak(node->next, node, std::memory_order_release,
                                          std::memory_order_relaxed)) {
  }
}

}  // namespace

spdlog::logger& logger() {
  auto* current = g_logger.load(std::memory_order_acquire);
  if (current) return **current;
  auto* created = new std::shared_ptr<spdlog::logger>(make_logger(STDERR_FILENO, spdlog::level::warn));
  if (!g_logger.compare_exchange_strong(current, created, std::memory_order_acq_rel)) {
    delete created;
    return **current;
  }
  return **created;
}

void configure_logging(const config::Config& config) {
  int fd = STDERR_FILENO;
  std::string path;
  std::string file_error;
  if (!config.log_file.empty()) {
    path = expand_process_id(config.log_file, static_cast<long>(getpid()));
    // The descriptor lives as long as the logger, which is never destroyed.
    if (const int opened = open_output_file(path, WriteMode::append, file_error); opened >= 0) fd = opened;
  }
  retire(g_logger.exchange(new std::shared_ptr<spdlog::logger>(make_logger(fd, to_spdlog(config.log_level))),
                           std::memory_order_acq_rel));
  if (!file_error.empty())
    logger().warn("cannot open log_file \"{}\" ({}); logging to stderr", path, file_error);
}

}  // namespace deepum::core
