// Size syntax: units, decimals, percentages, the canonical text form and what is rejected.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "deepum/config/config.hpp"

namespace {

using deepum::config::parse_size;
using deepum::config::SizeSpec;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = kKiB * 1024;
constexpr std::uint64_t kGiB = kMiB * 1024;
constexpr std::uint64_t kTiB = kGiB * 1024;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

std::uint64_t bytes_of(std::string_view text) {
  const std::optional<SizeSpec> spec = parse_size(text);
  REQUIRE_MESSAGE(spec.has_value(), "rejected: ", text);
  REQUIRE_FALSE(spec->is_percent());
  return spec->bytes();
}

// The "expected ..." reason for a rejected size.
std::string rejection(std::string_view text) {
  std::string why;
  const std::optional<SizeSpec> spec = parse_size(text, &why);
  CHECK_MESSAGE(!spec.has_value(), "accepted: ", text);
  return why;
}

}  // namespace

TEST_CASE("binary units are powers of 1024, with or without the B, in any case") {
  CHECK(bytes_of("1KiB") == kKiB);
  CHECK(bytes_of("512MiB") == 512 * kMiB);
  CHECK(bytes_of("8GiB") == 8 * kGiB);
  CHECK(bytes_of("2TiB") == 2 * kTiB);
  CHECK(bytes_of("8Gi") == 8 * kGiB);
  CHECK(bytes_of("8gib") == 8 * kGiB);
  CHECK(bytes_of("8GIB") == 8 * kGiB);
  CHECK(bytes_of("3kib") == 3 * kKiB);
  CHECK(bytes_of("3Ki") == 3 * kKiB);
  CHECK(bytes_of("7mi") == 7 * kMiB);
  CHECK(bytes_of("1ti") == kTiB);
}

TEST_CASE("decimal units are powers of 1000, with or without the B, in any case") {
  CHECK(bytes_of("1KB") == 1'000);
  CHECK(bytes_of("1kb") == 1'000);
  CHECK(bytes_of("1K") == 1'000);
  CHECK(bytes_of("5MB") == 5'000'000);
  CHECK(bytes_of("5m") == 5'000'000);
  CHECK(bytes_of("4GB") == 4'000'000'000);
  CHECK(bytes_of("4G") == 4'000'000'000);
  CHECK(bytes_of("2TB") == 2'000'000'000'000);
  CHECK(bytes_of("2t") == 2'000'000'000'000);
}

TEST_CASE("bytes are written with a B") {
  CHECK(bytes_of("123B") == 123);
  CHECK(bytes_of("123b") == 123);
  CHECK(bytes_of("123 B") == 123);
  CHECK(bytes_of("1B") == 1);
  CHECK(bytes_of("12.0B") == 12);
  CHECK(bytes_of("18446744073709551615B") == kMax);
}

TEST_CASE("a number without a unit is refused, with the forms to write instead") {
  // "DEEPUM_ALLOC_LIMIT=200" would otherwise be an allocation limit of 200 bytes.
  CHECK(rejection("200") ==
        R"(expected a unit after the number, such as "200MiB" or "200GiB" ("200B" for bytes))");
  CHECK(rejection(" 8 ") == R"(expected a unit after the number, such as "8MiB" or "8GiB" ("8B" for bytes))");
  CHECK(
      rejection("1073741824") ==
      R"(expected a unit after the number, such as "1073741824MiB" or "1073741824GiB" ("1073741824B" for bytes))");
  CHECK(rejection("1.5") == R"(expected a unit after the number, such as "1.5MiB" or "1.5GiB")");
  CHECK(rejection("12.0") == R"(expected a unit after the number, such as "12.0MiB" or "12.0GiB")");
  CHECK(rejection("18446744073709551615").starts_with("expected a unit after the number"));
  CHECK(rejection("0") == "expected a size greater than zero");
  CHECK(rejection("0.0") == "expected a size greater than zero");
}

TEST_CASE("decimal fractions scale exactly and drop a fraction of a byte") {
  CHECK(bytes_of("1.5GiB") == 3 * kGiB / 2);
  CHECK(bytes_of("0.5KiB") == 512);
  CHECK(bytes_of("0.25MiB") == kMiB / 4);
  CHECK(bytes_of("2.25MB") == 2'250'000);
  CHECK(bytes_of("1.5TB") == 1'500'000'000'000);
  CHECK(bytes_of("0.3KiB") == 307);  // 307.2 bytes
  CHECK(bytes_of("1.000000000000000000001GiB") == kGiB);
  CHECK(bytes_of("15.999999999999TiB") == 17592186044414);
}

TEST_CASE("one space may separate number and unit; surrounding whitespace is ignored") {
  CHECK(bytes_of("8 GiB") == 8 * kGiB);
  CHECK(bytes_of("  8GiB\t") == 8 * kGiB);
  CHECK(bytes_of("\n1.5 gb ") == 1'500'000'000);
  CHECK(rejection("8  GiB").starts_with("expected a size such as"));
  CHECK(rejection("8\tGiB").starts_with("expected a size such as"));
}

TEST_CASE("percentages of device memory") {
  const std::optional<SizeSpec> half = parse_size("50%");
  REQUIRE(half.has_value());
  CHECK(half->is_percent());
  CHECK(half->percent() == 50.0);
  CHECK(half->resolve(8 * kGiB) == 4 * kGiB);

  CHECK(parse_size("12.5%")->resolve(1000) == 125);
  CHECK(parse_size("50 %")->percent() == 50.0);
  CHECK(parse_size("100%")->resolve(80'000'000'007) == 80'000'000'007);  // exact, not rounded
  CHECK(parse_size("50%")->resolve(3) == 1);                             // rounds down
  CHECK(parse_size("200%")->resolve(80 * kGiB) == 160 * kGiB);
  CHECK(parse_size("10000%")->resolve(kGiB) == 100 * kGiB);
  CHECK(parse_size("0.001%")->resolve(100'000) == 1);
}

TEST_CASE("resolve saturates, and byte sizes ignore the device") {
  CHECK(SizeSpec::of_percent(10000.0).resolve(kMax) == kMax);
  CHECK(SizeSpec::of_percent(100.0).resolve(kMax) == kMax);
  CHECK(SizeSpec::of_bytes(123).resolve(8 * kGiB) == 123);
  CHECK(SizeSpec::of_bytes(123).resolve(0) == 123);
  CHECK(SizeSpec::of_percent(50.0).resolve(0) == 0);
}

TEST_CASE("garbage is rejected with the general form") {
  for (std::string_view text :
       {"",   " ",     "lots",    "GiB",      "8 GiB GiB", "8GiBGiB", "8GiBs",  "8XB",      "8 XiB",
        "1.", ".5GiB", "1..5GiB", "1.5.5GiB", "1e9",       "1E3KiB",  "nan",    "NaN%",     "inf",
        "+5", "0x10",  "8,5GiB",  "8_000",    "%",         "50%%",    "5 0GiB", "8GiB 8GiB"}) {
    CAPTURE(text);
    CHECK(rejection(text) == R"(expected a size such as "8GiB", "512MiB", "1073741824B" or "50%")");
  }
}

TEST_CASE("rejections say specifically what was wrong") {
  CHECK(rejection("-1") == "expected a positive size, not a negative one");
  CHECK(rejection("-1GiB") == "expected a positive size, not a negative one");
  CHECK(rejection("-50%") == "expected a positive size, not a negative one");
  CHECK(rejection("0GiB") == "expected a size greater than zero");
  CHECK(rejection("0.0001B") == "expected a whole number of bytes");
  CHECK(rejection("0.0000000001KiB") == "expected a size greater than zero");
  CHECK(rejection("12.5B") == "expected a whole number of bytes");
  CHECK(rejection("18446744073709551616B") == "expected a size below 16EiB (2^64 bytes)");
  CHECK(rejection("99999999999999999999999999999B") == "expected a size below 16EiB (2^64 bytes)");
  CHECK(rejection("16777216TiB") == "expected a size below 16EiB (2^64 bytes)");
  CHECK(rejection("18446744073709551.616KB") == "expected a size below 16EiB (2^64 bytes)");
  CHECK(rejection("0%") == "expected a percentage above 0% and at most 10000%");
  CHECK(rejection("0.0%") == "expected a percentage above 0% and at most 10000%");
  CHECK(rejection("10000.1%") == "expected a percentage above 0% and at most 10000%");
  CHECK(rejection("1e400%") == R"(expected a size such as "8GiB", "512MiB", "1073741824B" or "50%")");
}

TEST_CASE("parse_size works without a reason to fill") {
  CHECK_FALSE(parse_size("lots").has_value());
  CHECK(parse_size("1KiB").has_value());
}

TEST_CASE("to_string uses the largest binary unit that divides exactly") {
  CHECK(SizeSpec::of_bytes(8 * kGiB).to_string() == "8GiB");
  CHECK(SizeSpec::of_bytes(3 * kGiB / 2).to_string() == "1536MiB");
  CHECK(SizeSpec::of_bytes(kKiB).to_string() == "1KiB");
  CHECK(SizeSpec::of_bytes(5 * kTiB).to_string() == "5TiB");
  CHECK(SizeSpec::of_bytes(123).to_string() == "123B");
  CHECK(SizeSpec::of_bytes(1'024'000).to_string() == "1000KiB");
  CHECK(SizeSpec::of_bytes(1'000'000).to_string() == "1000000B");
  CHECK(SizeSpec::of_bytes(kMax).to_string() == "18446744073709551615B");
  CHECK(SizeSpec::of_bytes(0).to_string() == "0");  // zero, where a key gives it a meaning, is bare
  CHECK(SizeSpec::of_percent(50.0).to_string() == "50%");
  CHECK(SizeSpec::of_percent(12.5).to_string() == "12.5%");
  CHECK(SizeSpec::of_percent(0.001).to_string() == "0.001%");
  CHECK(SizeSpec::of_percent(0.0001).to_string() == "0.0001%");  // never an exponent
}

TEST_CASE("to_string reads back as the same size") {
  for (std::uint64_t bytes :
       {std::uint64_t{1}, std::uint64_t{123}, kKiB, 3 * kKiB / 2, kMiB, 8 * kGiB,
        std::uint64_t{1'000'000'000'000}, 16 * kTiB, kMax, kMax - kKiB + 1, std::uint64_t{1} << 63}) {
    CAPTURE(bytes);
    CHECK(parse_size(SizeSpec::of_bytes(bytes).to_string()) == SizeSpec::of_bytes(bytes));
  }
  // A spread of byte counts, exact multiples of every unit and not.
  for (std::uint64_t bytes = 1; bytes < kMax / 3; bytes = bytes * 3 + 1) {
    CAPTURE(bytes);
    CHECK(parse_size(SizeSpec::of_bytes(bytes).to_string()) == SizeSpec::of_bytes(bytes));
    if (bytes <= kMax / kKiB) {
      CHECK(parse_size(SizeSpec::of_bytes(bytes * kKiB).to_string()) == SizeSpec::of_bytes(bytes * kKiB));
    }
  }
  for (double percent : {100.0, 50.0, 12.5, 0.001, 33.333333333333336, 10000.0, 1e-300}) {
    CAPTURE(percent);
    CHECK(parse_size(SizeSpec::of_percent(percent).to_string()) == SizeSpec::of_percent(percent));
  }
  for (std::string_view text : {"8GiB", "1536MiB", "123B", "50%", "12.5%"}) {
    CHECK(parse_size(text)->to_string() == text);
  }
}

TEST_CASE("sizes compare by kind and amount") {
  CHECK(SizeSpec::of_bytes(100) == SizeSpec::of_bytes(100));
  CHECK_FALSE(SizeSpec::of_bytes(100) == SizeSpec::of_bytes(101));
  CHECK_FALSE(SizeSpec::of_bytes(100) == SizeSpec::of_percent(100.0));
  CHECK(SizeSpec::of_percent(100.0) == SizeSpec::of_percent(100.0));
  CHECK(parse_size("1GiB") == parse_size("1024MiB"));
}
