// Size values: "8GiB", "1.5GiB", "4GB", "123B", "50%" (and "0" where a key gives zero a meaning). A
// number without a unit is refused: "200" for an allocation limit is far more likely a slip than 200
// bytes.
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "deepum/config/config.hpp"
#include "size_syntax.hpp"
#include "text.hpp"

namespace deepum::config {
namespace {

__extension__ using Uint128 = unsigned __int128;  // exact arithmetic for "1.5TiB"-style products

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;
constexpr double kMaxPercent = 10000.0;

struct Unit {
  std::string_view name;  // lower case
  std::uint64_t bytes;
};

// The trailing "B" is optional: "8Gi" is 8GiB, "8G" is 8GB. Bytes need their "B".
constexpr std::array kUnits{
    Unit{"b", 1},
    Unit{"k", 1'000},
    Unit{"kb", 1'000},
    Unit{"ki", kKiB},
    Unit{"kib", kKiB},
    Unit{"m", 1'000'000},
    Unit{"mb", 1'000'000},
    Unit{"mi", kMiB},
    Unit{"mib", kMiB},
    Unit{"g", 1'000'000'000},
    Unit{"gb", 1'000'000'000},
    Unit{"gi", kGiB},
    Unit{"gib", kGiB},
    Unit{"t", 1'000'000'000'000},
    Unit{"tb", 1'000'000'000'000},
    Unit{"ti", kTiB},
    Unit{"tib", kTiB},
};

// Largest first, for the canonical text form.
constexpr std::array kBinaryUnits{Unit{"TiB", kTiB}, Unit{"GiB", kGiB}, Unit{"MiB", kMiB}, Unit{"KiB", kKiB}};

std::optional<std::uint64_t> unit_bytes(std::string_view unit) {
  for (const Unit& known : kUnits) {
    if (equals_ignoring_case(unit, known.name)) return known.bytes;
  }
  return std::nullopt;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::size_t count_digits(std::string_view text) {
  std::size_t n = 0;
  while (n < text.size() && is_digit(text[n])) ++n;
  return n;
}

// Whether `number` (digits, maybe a fraction) is zero: "0", "000", "0.00".
bool is_zero(std::string_view number) { return number.find_first_not_of("0.") == std::string_view::npos; }

// The reason for a number written without a unit, with the forms to write instead.
std::string missing_unit_reason(std::string_view number) {
  if (is_zero(number)) return "expected a size greater than zero";
  const std::string written(number);
  std::string reason =
      "expected a unit after the number, such as \"" + written + "MiB\" or \"" + written + "GiB\"";
  if (written.find('.') == std::string::npos) reason += " (\"" + written + "B\" for bytes)";
  return reason;
}

// `reason` is set to an "expected ..." phrase on failure. With `allow_zero`, a size of exactly zero
// bytes ("0", "0.0GiB") is SizeSpec::of_bytes(0); one that only rounds to zero is not.
std::optional<SizeSpec> parse_size_checked(std::string_view text, std::string& reason, bool allow_zero) {
  reason = kExpectedSize;
  text = trim(text);
  if (!text.empty() && text.front() == '-') {
    reason = "expected a positive size, not a negative one";
    return std::nullopt;
  }

  const std::size_t whole_digits = count_digits(text);
  if (whole_digits == 0) return std::nullopt;
  std::size_t number_end = whole_digits;
  std::string_view fraction;
  if (number_end < text.size() && text[number_end] == '.') {
    fraction = text.substr(number_end + 1, count_digits(text.substr(number_end + 1)));
    if (fraction.empty()) return std::nullopt;
    number_end += 1 + fraction.size();
  }
  const std::string_view number = text.substr(0, number_end);
  std::string_view unit = text.substr(number_end);
  if (unit.starts_with(' ')) unit.remove_prefix(1);  // one space may separate number and unit
  if (unit.starts_with(' ')) return std::nullopt;

  if (unit == "%") {
    double percent = 0.0;
    std::from_chars(number.data(), number.data() + number.size(), percent);
    if (!(percent > 0.0 && percent <= kMaxPercent)) {
      reason = "expected a percentage above 0% and at most 10000%";
      return std::nullopt;
    }
    return SizeSpec::of_percent(percent);
  }

  if (unit.empty()) {
    if (allow_zero && is_zero(number)) return SizeSpec::of_bytes(0);  // zero is zero in any unit
    reason = missing_unit_reason(number);
    return std::nullopt;
  }
  const std::optional<std::uint64_t> multiplier = unit_bytes(unit);
  if (!multiplier) return std::nullopt;

  constexpr Uint128 kLimit = Uint128{std::numeric_limits<std::uint64_t>::max()};
  constexpr std::string_view too_large = "expected a size below 16EiB (2^64 bytes)";
  Uint128 whole = 0;
  for (char digit : number.substr(0, whole_digits)) {
    whole = whole * 10 + static_cast<unsigned>(digit - '0');
    if (whole > kLimit) {
      reason = too_large;
      return std::nullopt;
    }
  }
  // Digits past the 18th change the result by far less than a byte.
  Uint128 fraction_value = 0;
  Uint128 fraction_scale = 1;
  for (char digit : fraction.substr(0, 18)) {
    fraction_value = fraction_value * 10 + static_cast<unsigned>(digit - '0');
    fraction_scale *= 10;
  }
  if (*multiplier == 1 && fraction_value != 0) {
    reason = "expected a whole number of bytes";
    return std::nullopt;
  }
  // Fractions of a byte ("0.3KiB" is 307.2 bytes) are dropped.
  const Uint128 bytes = whole * *multiplier + fraction_value * *multiplier / fraction_scale;
  if (bytes > kLimit) {
    reason = too_large;
    return std::nullopt;
  }
  if (bytes == 0) {
    if (allow_zero && whole == 0 && fraction_value == 0) return SizeSpec::of_bytes(0);
    reason = allow_zero ? "expected 0 or a size of at least one byte" : "expected a size greater than zero";
    return std::nullopt;
  }
  return SizeSpec::of_bytes(static_cast<std::uint64_t>(bytes));
}

}  // namespace

SizeSpec SizeSpec::of_bytes(std::uint64_t bytes) {
  SizeSpec spec;
  spec.bytes_ = bytes;
  return spec;
}

SizeSpec SizeSpec::of_percent(double percent_of_device) {
  SizeSpec spec;
  spec.is_percent_ = true;
  spec.percent_ = percent_of_device;
  return spec;
}

std::uint64_t SizeSpec::resolve(std::uint64_t device_total_bytes) const {
  if (!is_percent_) return bytes_;
  if (!(percent_ > 0.0)) return 0;  // also NaN
  // long double holds every 64-bit byte count exactly, so "100%" gives the total back.
  const long double bytes =
      static_cast<long double>(device_total_bytes) * static_cast<long double>(percent_) / 100.0L;
  if (bytes >= 18446744073709551616.0L) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(bytes);
}

std::string SizeSpec::to_string() const {
  try {
    if (is_percent_) {
      // Fixed notation, as parse_size reads no exponents; room for any finite double.
      std::array<char, 512> digits{};
      const auto [end, ec] =
          std::to_chars(digits.data(), digits.data() + digits.size(), percent_, std::chars_format::fixed);
      return std::string(digits.data(), end) + "%";
    }
    if (bytes_ == 0) return "0";  // only where a key gives zero a meaning, which takes it bare
    for (const Unit& unit : kBinaryUnits) {
      if (bytes_ % unit.bytes == 0) return std::to_string(bytes_ / unit.bytes) + std::string(unit.name);
    }
    return std::to_string(bytes_) + "B";
  } catch (...) {
    return {};  // only allocation can fail here
  }
}

namespace {

std::optional<SizeSpec> parse_size_reporting(std::string_view text, std::string* why, bool allow_zero) {
  try {
    std::string reason;
    std::optional<SizeSpec> spec = parse_size_checked(text, reason, allow_zero);
    if (!spec && why != nullptr) *why = reason;
    return spec;
  } catch (...) {
    return std::nullopt;  // only copying the reason can throw (allocation)
  }
}

}  // namespace

std::optional<SizeSpec> parse_size(std::string_view text, std::string* why) {
  return parse_size_reporting(text, why, false);
}

std::optional<SizeSpec> parse_size_or_zero(std::string_view text, std::string* why) {
  return parse_size_reporting(text, why, true);
}

}  // namespace deepum::config
