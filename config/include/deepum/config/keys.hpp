// The table of configuration keys. One row per key drives the JSON file, the DEEPUM_<KEY>
// environment variables and the documentation, so a new key (or a whole nested section, keys named
// `section.key`) is added by adding rows to the table in config/src/keys.cpp.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "deepum/config/config.hpp"

namespace deepum::config {

// Gives the Config member a key sets. The member's type is the key's type.
template <typename T>
using FieldOf = T& (*)(Config&);
using Field =
    std::variant<FieldOf<bool>, FieldOf<SizeSpec>, FieldOf<LogLevel>, FieldOf<std::string>,
                 FieldOf<std::uint32_t>, FieldOf<TracingLevel>, FieldOf<RemoteAccess>, FieldOf<Mode>>;

namespace detail {
template <auto member, auto... nested, typename Object>
constexpr auto& member_of(Object& object) {
  if constexpr (sizeof...(nested) == 0) {
    return object.*member;
  } else {
    return member_of<nested...>(object.*member);
  }
}

template <auto... members>
constexpr auto& config_member(Config& config) {
  return member_of<members...>(config);
}
}  // namespace detail

// field<&Config::alloc_limit>() for a top-level key; for a key in a section, name the path of
// members: field<&Config::moves, &Moves::swap>().
template <auto... members>
constexpr Field field() {
  return &detail::config_member<members...>;
}

// The values a whole-number key accepts, both ends included.
struct IntegerRange {
  std::uint32_t min = 0;
  std::uint32_t max = std::numeric_limits<std::uint32_t>::max();
};

struct KeySpec {
  std::string_view name;          // dotted path in the JSON file; "a.b" is also DEEPUM_A_B
  std::string_view default_text;  // as a user would write it; must say what Config{} holds
  std::string_view description;   // one line for the keys table
  Field field;
  // For a whole-number (std::uint32_t) key, the values it accepts; unset means any std::uint32_t.
  // Ignored for keys of other types.
  std::optional<IntegerRange> range = std::nullopt;
  // For a size key, what 0 stands for ("automatic"): when set, 0 (in any unit, not as a
  // percentage) is accepted and held as SizeSpec::of_bytes(0); when empty, a size must be above
  // zero. Ignored for keys of other types.
  std::string_view zero_means = {};
  // For a deprecated key, what replaces it, as the one-line notice at start says after "use ..."
  // ("mode (\"fast\" swaps, \"safe\" does not)"); with `no_longer_read`, why nothing does, as the
  // notice says after "no longer read: ". A deprecated key is still accepted, but left out of the
  // keys table and of `deepum config` unless set.
  std::string_view replaced_by = {};
  // The key's value is checked and then ignored: what it steered is gone.
  bool no_longer_read = false;

  bool deprecated() const { return !replaced_by.empty(); }
  // The one-line notice at start, after where the key was set: "deprecated, use ..." or "no
  // longer read: ...".
  std::string deprecation_notice() const {
    return (no_longer_read ? "no longer read: " : "deprecated, use ") + std::string(replaced_by);
  }
};

// Every key deepum knows, in documentation order.
std::span<const KeySpec> config_keys();

// The value `config` holds for `key`, written as a user would write it (reads back to the same
// value): "true", "8GiB", "50%", "debug", "1000", a string as is. For printing the configuration.
std::string key_value_text(const KeySpec& key, const Config& config);

// The environment variable for a dotted key: "prefetch.lookahead" -> "DEEPUM_PREFETCH_LOOKAHEAD".
std::string env_var_name(std::string_view key_name);

// load_config, load_config_text and keys_markdown_table over another table (tests use this to
// exercise nested sections before the real table has one).
ConfigLoad load_config(const EnvLookup& env, std::span<const KeySpec> keys);
ConfigLoad load_config_text(std::string_view json_text, std::string_view file_name, const EnvLookup& env,
                            std::span<const KeySpec> keys);
std::string keys_markdown_table(std::span<const KeySpec> keys);

}  // namespace deepum::config
