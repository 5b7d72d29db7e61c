#include "deepum/core/pytorch_alloc_conf.hpp"

#include <algorithm>
#include <cctype>

namespace deepum::core {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

bool is_truthy(std::string_view value) {
  std::string lower(trim(value));
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "true" || lower == "1";
}

}  // namespace

std::optional<std::string> without_expandable_segments(std::string_view alloc_conf) {
  std::string kept;
  bool removed = false;
  while (!alloc_conf.empty()) {
    const std::size_t comma = alloc_conf.find(',');
    const std::string_view entry = alloc_conf.substr(0, comma);
    alloc_conf = comma == std::string_view::npos ? std::string_view{} : alloc_conf.substr(comma + 1);
    const std::size_t colon = entry.find(':');
    if (colon != std::string_view::npos && trim(entry.substr(0, colon)) == "expandable_segments" &&
        is_truthy(entry.substr(colon + 1))) {
      removed = true;
      continue;
    }
    if (trim(entry).empty()) continue;
    if (!kept.empty()) kept += ',';
    kept += entry;
  }
  if (!removed) return std::nullopt;
  return kept;
}

}  // namespace deepum::core
