// PyTorch's PYTORCH_CUDA_ALLOC_CONF can ask for expandable segments, which PyTorch builds from
// cuMemCreate/cuMemMap: physical memory that cannot be managed. deepum switches the option off
// before PyTorch reads it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace deepum::core {

// The configuration with any truthy "expandable_segments" entry removed, or nullopt if it has none.
// "expandable_segments:True,max_split_size_mb:128" -> "max_split_size_mb:128".
std::optional<std::string> without_expandable_segments(std::string_view alloc_conf);

// The line deepum logs when it has switched the option off in `variable`: the original value shown
// printable (see config/printable.hpp) and cut short, so the line stays one line whatever it held.
std::string expandable_segments_notice(std::string_view variable, std::string_view original);

}  // namespace deepum::core
