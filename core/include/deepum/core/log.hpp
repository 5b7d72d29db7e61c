// deepum's logger: spdlog, header-only, to stderr or the configured file. Built once and never
// destroyed, so hooks running during exit can still log.
#pragma once

#include <spdlog/logger.h>

#include "deepum/config/config.hpp"

namespace deepum::core {

// The process-wide logger. Before configure_logging() it writes warnings and worse to stderr.
spdlog::logger& logger();
// Applies log_level and log_file. A log_file that cannot be opened falls back to stderr, saying so.
void configure_logging(const config::Config& config);

}  // namespace deepum::core
