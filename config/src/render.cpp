// `deepum config`'s two forms. The text form fits an 80-column terminal: long values wrap onto
// lines of their own under the value column rather than pushing past it.
#include "deepum/config/render.hpp"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>

#include "deepum/config/keys.hpp"
#include "deepum/config/printable.hpp"
#include "deepum/config/validate.hpp"

namespace deepum::config {
namespace {

constexpr std::string_view kMark = "* ";
constexpr std::string_view kNoMark = "  ";
constexpr std::size_t kFromWidth = 9;  // "default" and two spaces

// The byte where a line of at most `width` bytes taken from the front of `text` should end: at the
// last space that fits, else (one long word) at the width, never inside a UTF-8 sequence.
std::size_t line_end(std::string_view text, std::size_t width) {
  if (text.size() <= width) return text.size();
  const std::size_t space = text.rfind(' ', width);
  if (space != std::string_view::npos && space > 0) return space;
  std::size_t cut = width;
  while (cut > 1 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return cut;
}

// `text` wrapped to lines of at most kRenderWidth bytes, the first after `first`, the others after
// `indent` spaces (both shorter than the width). Each line ends with a newline.
std::string wrap(std::string_view text, std::string_view first, std::size_t indent) {
  std::string out(first);
  std::size_t room = kRenderWidth - std::min(first.size(), kRenderWidth - 1);
  while (true) {
    const std::size_t end = line_end(text, room);
    out.append(text.substr(0, end)).append("\n");
    text.remove_prefix(end);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    if (text.empty()) return out;
    out.append(indent, ' ');
    room = kRenderWidth - std::min(indent, kRenderWidth - 1);
  }
}

std::size_t key_width() {
  std::size_t width = 0;
  for (const KeySpec& key : config_keys()) width = std::max(width, key.name.size());
  return width + 2;
}

// Where a value came from: a short word for the table's column, the full name for JSON.
std::string_view origin_name(Origin origin, bool short_form = false) {
  switch (origin) {
    case Origin::default_value:
      return "default";
    case Origin::file:
      return "file";
    case Origin::environment:
      return short_form ? "env" : "environment";
  }
  return "unknown";
}

// A value as the text form shows it: printable, and "" for an empty string.
std::string shown(std::string_view value) { return value.empty() ? std::string("\"\"") : printable(value); }

std::string key_line(const KeySpec& key, const ConfigLoad& load, std::size_t name_width) {
  static const Config kDefaults;
  const std::string value = key_value_text(key, load.config);
  const std::string default_value = key_value_text(key, kDefaults);
  const bool changed = value != default_value;
  std::string head(changed ? kMark : kNoMark);
  head.append(key.name).append(name_width - key.name.size(), ' ');
  const std::string_view from = origin_name(load.origin_of(key.name).origin, /*short_form=*/true);
  head.append(from).append(kFromWidth - from.size(), ' ');
  // "0 (automatic)" where the key gives zero a meaning.
  const auto meaning = [&key](const std::string& text) {
    return key.zero_means.empty() || text != "0" ? shown(text) : "0 (" + std::string(key.zero_means) + ")";
  };
  std::string text = meaning(value);
  if (changed) text += " (default " + meaning(default_value) + ")";
  return wrap(text, head, head.size());
}

// Deprecated keys are shown only where set: they are read, but mode replaces them.
bool shown_key(const KeySpec& key, const ConfigLoad& load) {
  return !key.deprecated() || load.set_keys.contains(key.name);
}

// The legend under the keys, naming the file when one was read.
std::string sources_text(const ConfigLoad& load) {
  std::string file;
  for (const auto& [name, origin] : load.set_keys) {
    if (origin.origin == Origin::file) file = origin.where;
  }
  std::string text = "* differs from its default. from: default; file, ";
  text += file.empty() ? "the JSON file named by DEEPUM_CONFIG" : printable(file);
  text +=
      "; env, its DEEPUM_<KEY> variable. The keys are described in docs/configuration.md; "
      "deepum config --json gives all this as JSON.";
  return wrap(text, "", 0);
}

nlohmann::ordered_json typed_value(const KeySpec& key, const Config& config) {
  Config copy = config;  // the accessors take a Config&
  if (const auto* flag = std::get_if<FieldOf<bool>>(&key.field)) return (*flag)(copy);
  if (const auto* number = std::get_if<FieldOf<std::uint32_t>>(&key.field)) return (*number)(copy);
  return key_value_text(key, config);
}

}  // namespace

std::string render_text(const ConfigLoad& load) {
  if (!load.ok()) {
    return wrap(load.error, "deepum configuration rejected: ", 2) +
           "Inside a program deepum would pass every call through untouched.\n";
  }
  if (load.secure_execution) {
    return "deepum configuration: none. In a secure-execution process (set-user-ID, set-group-ID or\n"
           "file capabilities) deepum reads no configuration and passes every call through.\n";
  }
  std::string out = wrap(load.origin, "deepum configuration: ", 2) + "\n";
  const std::size_t name_width = key_width();
  std::string header(kNoMark);
  header.append("key")
      .append(name_width - 3, ' ')
      .append("from")
      .append(kFromWidth - 4, ' ')
      .append("value\n");
  out += header;
  for (const KeySpec& key : config_keys()) {
    if (shown_key(key, load)) out += key_line(key, load, name_width);
  }
  out += '\n';
  out += wrap(describe_moves(load.config), "moves while deepum holds a resident limit: ", 2);
  out += sources_text(load);
  for (std::string_view warning : load.warnings) {
    if (warning.starts_with("deepum: ")) warning.remove_prefix(8);
    out += wrap(warning, "warning: ", 2);
  }
  return out;
}

std::string render_json(const ConfigLoad& load) {
  using Json = nlohmann::ordered_json;
  static const Config kDefaults;
  Json document;
  document["ok"] = load.ok();
  document["error"] = load.ok() ? Json(nullptr) : Json(load.error);
  document["origin"] = load.origin;
  document["secure_execution"] = load.secure_execution;
  document["warnings"] = load.warnings;
  document["moves"] = describe_moves(load.config);
  Json& keys = document["keys"] = Json::object();
  for (const KeySpec& key : config_keys()) {
    if (!shown_key(key, load)) continue;
    const KeyOrigin origin = load.origin_of(key.name);
    Json entry;
    entry["value"] = typed_value(key, load.config);
    entry["default"] = typed_value(key, kDefaults);
    entry["changed"] = entry["value"] != entry["default"];
    entry["origin"] = origin_name(origin.origin);
    entry["source"] = origin.where.empty() ? Json(nullptr) : Json(origin.where);
    keys[std::string(key.name)] = std::move(entry);
  }
  // Paths come from the user and need not be UTF-8: replace what is not, rather than throw.
  return document.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace deepum::config
