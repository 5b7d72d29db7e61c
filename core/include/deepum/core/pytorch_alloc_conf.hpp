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

}  // namespace deepum::core
