// ASCII text helpers shared by the size parser, the loader and the environment check
// (locale-independent on purpose: the host program may have set any locale).
#pragma once

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace deepum::config {

inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

inline bool equals_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  }
  return true;
}

inline std::string_view trim(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const std::size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

// Levenshtein distance, ignoring ASCII case.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = diagonal + (ascii_lower(a[i - 1]) == ascii_lower(b[j - 1]) ? 0 : 1);
      diagonal = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
    }
  }
  return row[b.size()];
}

// The name in `known` closest to `name` (by edit distance, ignoring case), or empty if none is
// close enough to be a likely slip.
inline std::string_view closest_name(std::string_view name, std::span<const std::string_view> known) {
  std::string_view closest;
  std::size_t closest_distance = 0;
  for (std::string_view candidate : known) {
    const std::size_t distance = edit_distance(name, candidate);
    if (closest.empty() || distance < closest_distance) {
      closest = candidate;
      closest_distance = distance;
    }
  }
  if (closest.empty() || closest_distance > std::max<std::size_t>(2, closest.size() / 3)) return {};
  return closest;
}

}  // namespace deepum::config
