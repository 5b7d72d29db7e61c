#include "deepum/core/pytorch_alloc_conf.hpp"

#include "deepum/config/printable.hpp"

namespace deepum::core {
namespace {

// ASCII only, whatever locale the program has set.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

bool is_truthy(std::string_view value) {
  value = trim(value);
  if (value == "1") return true;
  constexpr std::string_view kTrue = "true";
  if (value.size() != kTrue.size()) return false;
  for (std::size_t i = 0; i < kTrue.size(); ++i) {
    const char c = value[i] >= 'A' && value[i] <= 'Z' ? static_cast<char>(value[i] - 'A' + 'a') : value[i];
    if (c != kTrue[i]) return false;
  }
  return true;
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

std::string expandable_segments_notice(std::string_view variable, std::string_view original) {
  constexpr std::size_t kMaxShown = 200;
  std::string shown = config::printable(original.substr(0, kMaxShown));
  if (original.size() > kMaxShown) shown += "...";
  return config::printable(variable) + "=\"" + shown +
         "\": expandable_segments switched off (its cuMemCreate memory cannot be managed)";
}

}  // namespace deepum::core
