// deepum's logger: spdlog, header-only, to stderr or the configured file. Built once and never
// destroyed, so hooks running during exit can still log. Every record is one line: control
// characters in a message are escaped (config::printable), so a value from the environment or the
// configuration that is logged cannot forge a line.
#pragma once

#include <spdlog/logger.h>

#include "deepum/config/config.hpp"

namespace deepum::core {

// The process-wide logger. Before configure_logging() it writes warnings and worse to stderr.
spdlog::logger& logger();
// Applies log_level and log_file ("%p" becomes the process id), which is opened for appending as
// open_output_file opens files. A log_file that cannot be opened falls back to stderr, saying so.
void configure_logging(const config::Config& config);

}  // namespace deepum::core
