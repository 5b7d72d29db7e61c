// Loading: defaults < JSON file (DEEPUM_CONFIG) < DEEPUM_<KEY> environment variables, all driven by
// the key table. Every public function catches everything: they run inside the preloaded library,
// where an escaping exception would take the host program down.
#include "deepum/config/config.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "deepum/config/file_read.hpp"
#include "deepum/config/keys.hpp"
#include "deepum/config/printable.hpp"
#include "deepum/config/validate.hpp"
#include "size_syntax.hpp"
#include "text.hpp"

namespace deepum::config {
namespace {

using Json = nlohmann::json;

constexpr char kConfigEnvVar[] = "DEEPUM_CONFIG";

// "a, b, c".
std::string join(std::span<const std::string_view> words) {
  std::string joined;
  for (std::string_view word : words) {
    if (!joined.empty()) joined += ", ";
    joined += word;
  }
  return joined;
}

// How values of each Config member type are named in the docs, read from the environment and from
// JSON, and written back as text. The readers get the key, for what it declares about its values
// (a whole number's range); on failure they say what was expected ("expected ..."). A new member
// type needs a ValueType here and an alternative in Field.
template <typename T>
struct ValueType;

template <>
struct ValueType<bool> {
  static constexpr std::string_view name = "bool";

  static std::optional<bool> from_text(std::string_view text, const KeySpec&, std::string& expected) {
    constexpr std::array kTrue{"1", "true", "yes", "on"};
    constexpr std::array kFalse{"0", "false", "no", "off"};
    text = trim(text);
    for (std::string_view word : kTrue) {
      if (equals_ignoring_case(text, word)) return true;
    }
    for (std::string_view word : kFalse) {
      if (equals_ignoring_case(text, word)) return false;
    }
    expected = "expected one of 1, 0, true, false, yes, no, on, off";
    return std::nullopt;
  }

  static std::optional<bool> from_json(const Json& value, const KeySpec&, std::string& expected) {
    if (value.is_boolean()) return value.get<bool>();
    expected = "expected true or false";
    return std::nullopt;
  }

  static std::string to_text(bool value) { return value ? "true" : "false"; }
};

template <>
struct ValueType<SizeSpec> {
  static constexpr std::string_view name = "size";

  // "size or 0 (automatic)" for the keys table, where the key gives zero a meaning.
  static std::string table_type(const KeySpec& key) {
    if (key.zero_means.empty()) return std::string(name);
    return std::string(name) + " or 0 (" + std::string(key.zero_means) + ")";
  }

  // A size, or where the key gives zero a meaning, zero too.
  static std::optional<SizeSpec> parse(std::string_view text, const KeySpec& key, std::string& expected) {
    std::optional<SizeSpec> spec =
        key.zero_means.empty() ? parse_size(text, &expected) : parse_size_or_zero(text, &expected);
    if (!spec) expected = with_zero(expected, key);
    return spec;
  }

  // The general "expected a size such as ..." names 0 too where the key takes it.
  static std::string with_zero(const std::string& expected, const KeySpec& key) {
    if (key.zero_means.empty() || expected != kExpectedSize) return expected;
    return expected + ", or 0 (" + std::string(key.zero_means) + ")";
  }

  static std::optional<SizeSpec> from_text(std::string_view text, const KeySpec& key, std::string& expected) {
    return parse(text, key, expected);
  }

  // A JSON size is a string. An integer is read as the same digits in the environment would be:
  // refused for want of a unit, or 0 where the key gives zero a meaning.
  static std::optional<SizeSpec> from_json(const Json& value, const KeySpec& key, std::string& expected) {
    if (value.is_string()) return parse(value.get_ref<const std::string&>(), key, expected);
    if (value.is_number_integer()) return parse(value.dump(), key, expected);
    expected = with_zero(std::string(kExpectedSize), key);
    return std::nullopt;
  }

  static std::string to_text(const SizeSpec& value) { return value.to_string(); }
};

// A whole number within the key's range. From the environment: decimal digits only (no sign, no
// fraction, no exponent); from JSON: an integer number, not a string.
template <>
struct ValueType<std::uint32_t> {
  static constexpr std::string_view name = "whole number";

  static IntegerRange range_of(const KeySpec& key) { return key.range.value_or(IntegerRange{}); }

  // "whole number, 1 to 1000" for the keys table.
  static std::string table_type(const KeySpec& key) {
    if (!key.range) return std::string(name);
    return std::string(name) + ", " + std::to_string(key.range->min) + " to " +
           std::to_string(key.range->max);
  }

  static std::string expected_text(const KeySpec& key) {
    const IntegerRange range = range_of(key);
    return "expected a whole number from " + std::to_string(range.min) + " to " + std::to_string(range.max);
  }

  static std::optional<std::uint32_t> in_range(std::uint64_t value, const KeySpec& key,
                                               std::string& expected) {
    const IntegerRange range = range_of(key);
    if (value < range.min || value > range.max) {
      expected = expected_text(key);
      return std::nullopt;
    }
    return static_cast<std::uint32_t>(value);
  }

  static std::optional<std::uint32_t> from_text(std::string_view text, const KeySpec& key,
                                                std::string& expected) {
    text = trim(text);
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
      expected = expected_text(key);
      return std::nullopt;
    }
    // Saturates just past the largest std::uint32_t, so a long number is out of range, not wrapped.
    constexpr std::uint64_t kTooBig = std::uint64_t{std::numeric_limits<std::uint32_t>::max()} + 1;
    std::uint64_t value = 0;
    for (char digit : text) value = std::min(value * 10 + static_cast<std::uint64_t>(digit - '0'), kTooBig);
    return in_range(value, key, expected);
  }

  static std::optional<std::uint32_t> from_json(const Json& value, const KeySpec& key,
                                                std::string& expected) {
    if (value.is_number_unsigned()) return in_range(value.get<std::uint64_t>(), key, expected);
    expected = expected_text(key);
    return std::nullopt;
  }

  static std::string to_text(std::uint32_t value) { return std::to_string(value); }
};

template <>
struct ValueType<std::string> {
  static constexpr std::string_view name = "string";

  static std::optional<std::string> from_text(std::string_view text, const KeySpec&, std::string&) {
    return std::string(text);
  }

  static std::optional<std::string> from_json(const Json& value, const KeySpec&, std::string& expected) {
    if (value.is_string()) return value.get<std::string>();
    expected = "expected a string";
    return std::nullopt;
  }

  static std::string to_text(const std::string& value) { return value; }
};

// An enum written as one of its names, in any case: `kValues` in the order messages list them, and
// `name_of` giving each one's name.
template <typename Enum, const auto& kValues, std::string_view (*name_of)(Enum)>
struct NamedValueType {
  static std::string expected_text() {
    std::array<std::string_view, std::tuple_size_v<std::remove_cvref_t<decltype(kValues)>>> names{};
    for (std::size_t i = 0; i < names.size(); ++i) names[i] = name_of(kValues[i]);
    return "expected one of " + join(names);
  }

  static std::optional<Enum> from_text(std::string_view text, const KeySpec&, std::string& expected) {
    text = trim(text);
    for (Enum value : kValues) {
      if (equals_ignoring_case(text, name_of(value))) return value;
    }
    expected = expected_text();
    return std::nullopt;
  }

  static std::optional<Enum> from_json(const Json& value, const KeySpec& key, std::string& expected) {
    if (value.is_string()) return from_text(value.get_ref<const std::string&>(), key, expected);
    expected = expected_text();
    return std::nullopt;
  }

  static std::string to_text(Enum value) { return std::string(name_of(value)); }
};

constexpr std::array kLogLevels{LogLevel::trace, LogLevel::debug, LogLevel::info,
                                LogLevel::warn,  LogLevel::error, LogLevel::off};
constexpr std::array kTracingLevels{TracingLevel::off, TracingLevel::launches, TracingLevel::kernels,
                                    TracingLevel::full};

template <>
struct ValueType<LogLevel> : NamedValueType<LogLevel, kLogLevels, &log_level_name> {
  static constexpr std::string_view name = "log level";
};

template <>
struct ValueType<TracingLevel> : NamedValueType<TracingLevel, kTracingLevels, &tracing_level_name> {
  static constexpr std::string_view name = "tracing level";
};

constexpr std::array kRemoteAccessModes{RemoteAccess::off, RemoteAccess::mapped, RemoteAccess::on_fault};

template <>
struct ValueType<RemoteAccess> : NamedValueType<RemoteAccess, kRemoteAccessModes, &remote_access_name> {
  static constexpr std::string_view name = "remote access mode";
};

constexpr std::array kModes{Mode::fast, Mode::safe, Mode::evict, Mode::driver};

template <>
struct ValueType<Mode> : NamedValueType<Mode, kModes, &mode_name> {
  static constexpr std::string_view name = "mode";
};

template <typename FieldAccess>
using FieldType = std::remove_reference_t<std::invoke_result_t<FieldAccess, Config&>>;

template <typename FieldAccess>
using ValueTypeOf = ValueType<FieldType<FieldAccess>>;

// The key's type as the keys table shows it.
std::string type_name(const KeySpec& key) {
  return std::visit(
      [&key](auto access) -> std::string {
        using Type = ValueTypeOf<decltype(access)>;
        if constexpr (requires { Type::table_type(key); }) {
          return Type::table_type(key);
        } else {
          return std::string(Type::name);
        }
      },
      key.field);
}

// Reads a value of the key's type with `read(ValueType<T>, expected)` and stores it in `config`.
// Returns what was expected when the value does not fit.
template <typename Read>
std::optional<std::string> store(const KeySpec& key, Config& config, const Read& read) {
  return std::visit(
      [&](auto access) -> std::optional<std::string> {
        std::string expected;
        auto value = read(ValueTypeOf<decltype(access)>{}, expected);
        if (!value) return expected;
        access(config) = std::move(*value);
        return std::nullopt;
      },
      key.field);
}

const KeySpec* find_key(std::span<const KeySpec> keys, std::string_view name) {
  for (const KeySpec& key : keys) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

// The names directly inside section `section` ("prefetch" -> "lookahead", ...), in table order.
std::vector<std::string_view> section_members(std::span<const KeySpec> keys, std::string_view section) {
  std::vector<std::string_view> members;
  for (const KeySpec& key : keys) {
    if (key.name.size() <= section.size() + 1 || !key.name.starts_with(section) ||
        key.name[section.size()] != '.') {
      continue;
    }
    std::string_view rest = key.name.substr(section.size() + 1);
    rest = rest.substr(0, rest.find('.'));
    if (std::find(members.begin(), members.end(), rest) == members.end()) members.push_back(rest);
  }
  return members;
}

std::string unknown_key_message(std::string_view name, std::span<const KeySpec> keys) {
  const std::string message = "unknown key \"" + std::string(name) + "\"";
  std::vector<std::string_view> key_names;
  std::vector<std::string_view> candidates;  // the keys and the sections holding them
  for (const KeySpec& key : keys) {
    if (!key.deprecated()) key_names.push_back(key.name);
    for (std::size_t dot = key.name.find('.'); dot != std::string_view::npos;
         dot = key.name.find('.', dot + 1)) {
      candidates.push_back(key.name.substr(0, dot));
    }
    candidates.push_back(key.name);
  }
  const std::string_view closest = closest_name(name, candidates);
  if (!closest.empty()) return message + " (did you mean \"" + std::string(closest) + "\"?)";
  return message + " (the keys are " + join(key_names) + ")";
}

// Text as it appears in a message, cut short if long.
std::string brief(std::string_view text) {
  constexpr std::size_t kMaxLength = 60;
  if (text.size() <= kMaxLength) return std::string(text);
  std::size_t cut = kMaxLength;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
  return std::string(text.substr(0, cut)) + "...";
}

// A JSON value as it appears in a message, cut short if long.
std::string brief_json(const Json& value) {
  return brief(value.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// Applies the members of JSON object `object`, which sits at section `section` ("" for the top
// level), and lists the keys set in `set`. Returns the error, less the "deepum: config <file>: "
// prefix.
std::optional<std::string> apply_json_section(const Json& object, const std::string& section,
                                              std::span<const KeySpec> keys, Config& config,
                                              std::vector<std::string>& set) {
  for (const auto& item : object.items()) {
    const Json& value = item.value();
    const std::string name = section.empty() ? item.key() : section + "." + item.key();
    if (const KeySpec* key = find_key(keys, name)) {
      const auto read = [&value, key](auto type, std::string& expected) {
        return type.from_json(value, *key, expected);
      };
      if (auto expected = store(*key, config, read)) {
        return "key \"" + name + "\": " + *expected + ", got " + brief_json(value);
      }
      set.push_back(name);
      continue;
    }
    const std::vector<std::string_view> members = section_members(keys, name);
    if (members.empty()) return unknown_key_message(name, keys);
    if (!value.is_object()) {
      return "key \"" + name + "\": expected an object with the keys " + join(members) + ", got " +
             brief_json(value);
    }
    if (auto error = apply_json_section(value, name, keys, config, set)) return error;
  }
  return std::nullopt;
}

// nlohmann reports the 1-based byte offset where it stopped; users want line and column.
std::string line_and_column(std::string_view text, std::size_t byte) {
  const std::string_view before = text.substr(0, std::min(byte == 0 ? 0 : byte - 1, text.size()));
  const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
  const std::size_t last_newline = before.rfind('\n');
  const std::string_view line_text =
      before.substr(last_newline == std::string_view::npos ? 0 : last_newline + 1);
  // Columns count characters, not the bytes of a UTF-8 sequence.
  const auto column = 1 + std::count_if(line_text.begin(), line_text.end(), [](char c) {
                        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
                      });
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// Applies a JSON file's text. Returns the whole error message.
std::optional<std::string> apply_json_text(std::string_view text, std::string_view file_name,
                                           std::span<const KeySpec> keys, Config& config,
                                           std::vector<std::string>& set) {
  const std::string where = "deepum: config " + std::string(file_name);
  Json document;
  try {
    document = Json::parse(text);
  } catch (const Json::parse_error& error) {
    // what() is "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ...".
    std::string_view detail = error.what();
    const std::size_t detail_start = detail.find(": ", detail.find("parse error"));
    if (detail_start != std::string_view::npos) detail.remove_prefix(detail_start + 2);
    return where + " " + line_and_column(text, error.byte) + ": " + std::string(detail);
  }
  if (!document.is_object()) {
    return where + ": the top level must be a JSON object such as {\"alloc_limit\": \"8GiB\"}, got " +
           brief_json(document);
  }
  if (auto error = apply_json_section(document, "", keys, config, set)) return where + ": " + *error;
  return std::nullopt;
}

// Applies every DEEPUM_<KEY> that is set and lists those keys in `used`. Returns the whole error
// message.
std::optional<std::string> apply_env(const EnvLookup& env, std::span<const KeySpec> keys, Config& config,
                                     std::vector<const KeySpec*>& used) {
  for (const KeySpec& key : keys) {
    const std::string var = env_var_name(key.name);
    const char* text = env(var.c_str());
    if (text == nullptr) continue;
    const auto read = [text, &key](auto type, std::string& expected) {
      return type.from_text(text, key, expected);
    };
    if (auto expected = store(key, config, read)) {
      return "deepum: environment " + var + "=\"" + brief(text) + "\": " + *expected;
    }
    used.push_back(&key);
  }
  return std::nullopt;
}

// Where a key's value came from, as messages name it: "config /x.json: key \"k\"" or
// "environment DEEPUM_K".
std::string where_set(std::string_view key, const KeyOrigin& origin) {
  if (origin.origin == Origin::environment) return "environment " + origin.where;
  return "config " + printable(origin.where) + ": key \"" + std::string(key) + "\"";
}

// One line for each deprecated key that was set, naming what replaces it.
void add_deprecation_notices(ConfigLoad& load, std::span<const KeySpec> keys) {
  for (const KeySpec& key : keys) {
    if (!key.deprecated()) continue;
    if (const auto set = load.set_keys.find(key.name); set != load.set_keys.end()) {
      load.warnings.push_back("deepum: " + where_set(key.name, set->second) + ": " +
                              key.deprecation_notice());
    }
  }
}

// The deprecated keys that set one move each, and the move.
struct MoveKey {
  std::string_view name;
  bool Moves::*move;
};
constexpr std::array kMoveKeys{
    MoveKey{"stream_ordered_prefetch", &Moves::prefetch},
    MoveKey{"stream_ordered_discard", &Moves::discard},
    MoveKey{"stream_ordered_place_fresh", &Moves::place_fresh},
    MoveKey{"stream_ordered_swap", &Moves::swap},
    MoveKey{"stream_ordered_eviction_thread", &Moves::eviction_thread},
};

// The moves in effect: mode's, each but those a deprecated key set. A configuration that sets a
// deprecated key of the moves and no mode was written before mode existed: its other moves are
// those of that time (mode evict's), so that it runs as it did. stream_ordered_eviction false asked
// for evictions from CUPTI's records alone, which are gone: it runs as mode evict, evictions alone
// (config_notes says which of its moves' keys that leaves idle).
void settle_moves(ConfigLoad& load) {
  const Moves asked = load.config.moves;  // where the deprecated keys wrote
  const bool evictions_alone = !load.config.deprecated.stream_ordered_eviction;
  const bool written_before_mode =
      !load.set_keys.contains("mode") &&
      (load.set_keys.contains("stream_ordered_eviction") ||
       std::any_of(kMoveKeys.begin(), kMoveKeys.end(),
                   [&load](const MoveKey& key) { return load.set_keys.contains(key.name); }));
  Moves moves = moves_of(written_before_mode || evictions_alone ? Mode::evict : load.config.mode);
  for (const MoveKey& key : kMoveKeys) {
    if (evictions_alone && key.move != &Moves::eviction_thread) continue;
    if (load.set_keys.contains(key.name)) moves.*key.move = asked.*key.move;
  }
  load.config.moves = moves;
}

struct JsonFile {
  std::string_view name;
  std::string_view text;
};

// A load that failed: the defaults, and one message, on one line whatever the values held.
ConfigLoad failed(const std::string& message) {
  ConfigLoad result;
  result.error = printable(message);
  result.origin = "defaults";
  return result;
}

ConfigLoad load(const std::optional<JsonFile>& file, const EnvLookup& env, std::span<const KeySpec> keys) {
  ConfigLoad result;
  result.origin = "defaults";
  if (file) {
    std::vector<std::string> set;
    if (auto error = apply_json_text(file->text, file->name, keys, result.config, set)) return failed(*error);
    for (std::string& name : set) result.set_keys[std::move(name)] = {Origin::file, std::string(file->name)};
    result.origin += " + " + printable(file->name);
  }
  std::vector<const KeySpec*> env_used;
  if (auto error = apply_env(env, keys, result.config, env_used)) return failed(*error);
  for (std::size_t i = 0; i < env_used.size(); ++i) {
    const std::string var = env_var_name(env_used[i]->name);
    result.set_keys[std::string(env_used[i]->name)] = {Origin::environment, var};
    result.origin += (i == 0 ? " + env (" : ", ") + var;
  }
  if (!env_used.empty()) result.origin += ")";
  settle_moves(result);
  add_deprecation_notices(result, keys);
  for (std::string& note : config_notes(result)) result.warnings.push_back(std::move(note));
  return result;
}

// The load to fall back on when something unexpected (allocation, a throwing EnvLookup) fails.
ConfigLoad internal_error(const char* what) noexcept {
  ConfigLoad result;
  try {
    result = failed(std::string("deepum: config: internal error: ") + what);
  } catch (...) {
    result.error = "deepum: error";  // short enough not to allocate
  }
  return result;
}

// Runs `make_load`, turning any exception into an error so nothing escapes into the host program.
template <typename MakeLoad>
ConfigLoad guarded(const MakeLoad& make_load) noexcept {
  try {
    return make_load();
  } catch (const std::exception& error) {
    return internal_error(error.what());
  } catch (...) {
    return internal_error("unknown exception");
  }
}

}  // namespace

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::trace:
      return "trace";
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warn:
      return "warn";
    case LogLevel::error:
      return "error";
    case LogLevel::off:
      return "off";
  }
  return "unknown";
}

std::string_view tracing_level_name(TracingLevel level) {
  switch (level) {
    case TracingLevel::off:
      return "off";
    case TracingLevel::launches:
      return "launches";
    case TracingLevel::kernels:
      return "kernels";
    case TracingLevel::full:
      return "full";
  }
  return "unknown";
}

std::string_view mode_name(Mode mode) {
  switch (mode) {
    case Mode::fast:
      return "fast";
    case Mode::safe:
      return "safe";
    case Mode::evict:
      return "evict";
    case Mode::driver:
      return "driver";
  }
  return "unknown";
}

std::string_view remote_access_name(RemoteAccess mode) {
  switch (mode) {
    case RemoteAccess::off:
      return "off";
    case RemoteAccess::mapped:
      return "mapped";
    case RemoteAccess::on_fault:
      return "on_fault";
  }
  return "unknown";
}

KeyOrigin ConfigLoad::origin_of(std::string_view key) const {
  const auto found = set_keys.find(key);
  return found == set_keys.end() ? KeyOrigin{} : found->second;
}

std::string key_value_text(const KeySpec& key, const Config& config) {
  try {
    Config copy = config;  // the accessors take a Config&
    return std::visit([&](auto access) { return ValueTypeOf<decltype(access)>::to_text(access(copy)); },
                      key.field);
  } catch (...) {
    return {};
  }
}

std::string env_var_name(std::string_view key_name) {
  try {
    std::string var = "DEEPUM_";
    for (char c : key_name) var += c == '.' ? '_' : ascii_upper(c);
    return var;
  } catch (...) {
    return {};
  }
}

ConfigLoad load_config(const EnvLookup& env, std::span<const KeySpec> keys) {
  return guarded([&] {
    const char* path = env(kConfigEnvVar);
    if (path == nullptr || *path == '\0') return load(std::nullopt, env, keys);
    std::string read_error;
    const std::optional<std::string> text = read_regular_file(path, kMaxConfigFileBytes, read_error);
    if (!text) {
      return failed("deepum: config " + std::string(path) + ": cannot read the file named by " +
                    kConfigEnvVar + " (" + read_error + ")");
    }
    return load(JsonFile{path, *text}, env, keys);
  });
}

ConfigLoad load_config(const EnvLookup& env) { return load_config(env, config_keys()); }

ConfigLoad load_config_text(std::string_view json_text, std::string_view file_name, const EnvLookup& env,
                            std::span<const KeySpec> keys) {
  return guarded([&] { return load(JsonFile{file_name, json_text}, env, keys); });
}

ConfigLoad load_config_text(std::string_view json_text, std::string_view file_name, const EnvLookup& env) {
  return load_config_text(json_text, file_name, env, config_keys());
}

std::string keys_markdown_table(std::span<const KeySpec> keys) {
  try {
    std::string table =
        "| key | type | default | environment | description |\n"
        "|-----|------|---------|-------------|-------------|\n";
    for (const KeySpec& key : keys) {
      if (key.deprecated()) continue;
      const std::string default_text = key.default_text.empty() ? "\"\"" : std::string(key.default_text);
      table += "| `" + std::string(key.name) + "` | " + type_name(key) + " | `" + default_text + "` | `" +
               env_var_name(key.name) + "` | " + std::string(key.description) + " |\n";
    }
    return table;
  } catch (...) {
    return {};
  }
}

std::string keys_markdown_table() { return keys_markdown_table(config_keys()); }

std::string deprecated_keys_markdown_table() {
  try {
    std::string table =
        "| deprecated key | environment | use instead | what it sets |\n"
        "|----------------|-------------|-------------|--------------|\n";
    for (const KeySpec& key : config_keys()) {
      if (!key.deprecated()) continue;
      const std::string instead =
          key.no_longer_read ? "nothing: " + std::string(key.replaced_by) : std::string(key.replaced_by);
      table += "| `" + std::string(key.name) + "` | `" + env_var_name(key.name) + "` | " + instead + " | " +
               std::string(key.description) + " |\n";
    }
    return table;
  } catch (...) {
    return {};
  }
}

}  // namespace deepum::config
