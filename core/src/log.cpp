#include "deepum/core/log.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <atomic>
#include <memory>

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

std::shared_ptr<spdlog::logger> make_stderr_logger() {
  auto log = std::make_shared<spdlog::logger>("deepum", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  log->set_pattern(kPattern);
  log->set_level(spdlog::level::warn);
  log->flush_on(spdlog::level::trace);
  return log;
}

// Leaked on purpose: hooks may log after static destructors have run.
std::atomic<std::shared_ptr<spdlog::logger>*> g_logger{nullptr};

}  // namespace

spdlog::logger& logger() {
  auto* current = g_logger.load(std::memory_order_acquire);
  if (current) return **current;
  auto* created = new std::shared_ptr<spdlog::logger>(make_stderr_logger());
  if (!g_logger.compare_exchange_strong(current, created, std::memory_order_acq_rel)) {
    delete created;
    return **current;
  }
  return **created;
}

void configure_logging(const config::Config& config) {
  std::shared_ptr<spdlog::logger> log;
  std::string file_error;
  if (!config.log_file.empty()) {
    try {
      log = std::make_shared<spdlog::logger>(
          "deepum", std::make_shared<spdlog::sinks::basic_file_sink_mt>(config.log_file, /*truncate=*/false));
    } catch (const std::exception& e) {
      file_error = e.what();
    }
  }
  if (!log) log = make_stderr_logger();
  log->set_pattern(kPattern);
  log->set_level(to_spdlog(config.log_level));
  log->flush_on(spdlog::level::trace);
  // The previous logger stays alive (leaked): another thread may still be writing through it.
  g_logger.store(new std::shared_ptr<spdlog::logger>(std::move(log)), std::memory_order_release);
  if (!file_error.empty()) {
    logger().warn("cannot open log_file \"{}\" ({}); logging to stderr", config.log_file, file_error);
  }
}

}  // namespace deepum::core
