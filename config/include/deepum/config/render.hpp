// `deepum config`: the configuration in effect, key by key, with where each value came from, for a
// terminal and for programs.
#pragma once

#include <string>

#include "deepum/config/config.hpp"

namespace deepum::config {

// Text lines of at most kRenderWidth columns: every key's value (a deprecated key's only where
// set), a mark on those that differ from their default, and where each came from (default, file or
// environment), then the moves in effect and any warnings (deprecated keys, settings without
// effect).
std::string render_text(const ConfigLoad& load);

// One JSON object: "ok", "error", "origin", "secure_execution", "warnings", "moves" (in words), and
// "keys", which maps each key (in table order; a deprecated key only where set) to its "value",
// "default", "changed", "origin" ("default", "file" or "environment") and "source" (the file's path
// or the variable's name; null for a default).
// Booleans and whole numbers are JSON booleans and numbers; every other value is a string as a user
// would write it.
std::string render_json(const ConfigLoad& load);

inline constexpr std::size_t kRenderWidth = 80;

}  // namespace deepum::config
