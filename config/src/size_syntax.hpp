// What a size looks like, shared by the size parser and the JSON reader's messages, and the parser for
// size keys that give zero a meaning.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "deepum/config/config.hpp"

namespace deepum::config {

inline constexpr std::string_view kExpectedSize =
    R"(expected a size such as "8GiB", "512MiB", "1073741824B" or "50%")";

// parse_size, but a size of zero ("0", "0GiB"; not "0%") is accepted as SizeSpec::of_bytes(0), for
// keys where 0 stands for something (KeySpec::zero_means).
std::optional<SizeSpec> parse_size_or_zero(std::string_view text, std::string* why = nullptr);

}  // namespace deepum::config
