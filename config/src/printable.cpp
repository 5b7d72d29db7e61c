#include "deepum/config/printable.hpp"

#include <array>
#include <cstdint>

namespace deepum::config {
namespace {

constexpr std::array<char, 16> kHexDigits{'0', '1', '2', '3', '4', '5', '6', '7',
                                          '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};

void append_hex_byte(std::uint8_t byte, std::string& out) {
  out += kHexDigits[byte >> 4];
  out += kHexDigits[byte & 0xF];
}

// UTF-8 encodes U+0080..U+009F as 0xC2 followed by 0x80..0x9F.
bool is_c1_control(std::string_view text, std::size_t i) {
  return static_cast<std::uint8_t>(text[i]) == 0xC2 && i + 1 < text.size() &&
         static_cast<std::uint8_t>(text[i + 1]) >= 0x80 && static_cast<std::uint8_t>(text[i + 1]) <= 0x9F;
}

}  // namespace

void append_printable(std::string_view text, std::string& out) {
  out.reserve(out.size() + text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(text[i]);
    if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\r') {
      out += "\\r";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      out += "\\x";
      append_hex_byte(byte, out);
    } else if (is_c1_control(text, i)) {
      out += "\\u00";
      append_hex_byte(static_cast<std::uint8_t>(text[++i]), out);
    } else {
      out += text[i];
    }
  }
}

std::string printable(std::string_view text) {
  std::string out;
  append_printable(text, out);
  return out;
}

}  // namespace deepum::config
