// What a size looks like, shared by the size parser and the JSON reader's messages.
#pragma once

#include <string_view>

namespace deepum::config {

inline constexpr std::string_view kExpectedSize =
    R"(expected a size such as "8GiB", "512MiB", 1073741824 or "50%")";

}  // namespace deepum::config
