// `deepum config`'s two forms: text that fits an 80-column terminal and marks what changed and
// where it came from, and JSON with each key's value, default and origin.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/config/keys.hpp"
#include "deepum/config/render.hpp"

namespace {

namespace cfg = deepum::config;

cfg::ConfigLoad load_with(std::map<std::string, std::string> vars, std::vector<std::string> names = {}) {
  const cfg::EnvLookup lookup = [vars = std::move(vars)](const char* name) -> const char* {
    const auto found = vars.find(name);
    return found == vars.end() ? nullptr : found->second.c_str();
  };
  return cfg::load_process_config({lookup, std::move(names), false});
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// `text` with each wrapped line joined back to the one before: a continuation starts with two
// spaces, after a line that is not a key's.
std::string unwrapped(const std::string& text) {
  std::string joined;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && text.compare(i + 1, 2, "  ") == 0) {
      const std::size_t line_start = joined.rfind('\n') == std::string::npos ? 0 : joined.rfind('\n') + 1;
      const bool key_line =
          joined.compare(line_start, 2, "* ") == 0 || joined.compare(line_start, 2, "  ") == 0;
      if (!key_line) {
        joined += ' ';
        i += 2;
        continue;
      }
    }
    joined += text[i];
  }
  return joined;
}

// The line that shows `key`: it starts with the mark column, then the key and a space.
std::string line_of_key(const std::string& text, const std::string& key) {
  for (const std::string& line : lines_of(text)) {
    if (line.size() > 2 && line.compare(2, key.size() + 1, key + " ") == 0) return line;
  }
  return {};
}

}  // namespace

TEST_CASE("the text form marks changed values, says where each came from and shows the default") {
  const std::string text =
      cfg::render_text(load_with({{"DEEPUM_ALLOC_LIMIT", "16GiB"}, {"DEEPUM_SUMMARY", "true"}}));
  CHECK(text.starts_with("deepum configuration: defaults + env (DEEPUM_ALLOC_LIMIT, DEEPUM_SUMMARY)\n"));
  CHECK(line_of_key(text, "alloc_limit") ==
        "* alloc_limit                     env      16GiB (default 100%)");
  // Set, but to its default: not marked, yet its origin shows.
  CHECK(line_of_key(text, "summary") == "  summary                         env      true");
  CHECK(line_of_key(text, "resident_limit") == "  resident_limit                  default  0 (automatic)");
  CHECK(line_of_key(text, "mode") == "  mode                            default  fast");
  CHECK(line_of_key(text, "trace_file") == "  trace_file                      default  \"\"");
  // Every key but the deprecated ones, which show only where set.
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    CAPTURE(key.name);
    CHECK(line_of_key(text, std::string(key.name)).empty() == key.deprecated());
  }
  CHECK(unwrapped(text).find("\nmoves while deepum holds a resident limit: evictions (from deepum's thread), "
                             "prefetches, discards, placement of fresh blocks, swaps\n") !=
        std::string::npos);
}

TEST_CASE("the text form shows a deprecated key where set, the moves it leaves, and its notice") {
  const std::string text = cfg::render_text(
      load_with({{"DEEPUM_STREAM_ORDERED_PREFETCH", "true"}, {"DEEPUM_RESIDENT_LIMIT", "50%"}}));
  CHECK(line_of_key(text, "stream_ordered_prefetch") == "  stream_ordered_prefetch         env      true");
  CHECK(line_of_key(text, "stream_ordered_swap").empty());
  // Written before mode existed: the other moves are those of that time.
  CHECK(unwrapped(text).find("\nmoves while deepum holds a resident limit: evictions (from deepum's thread), "
                             "prefetches\n") != std::string::npos);
  CHECK(unwrapped(text).find("\nwarning: environment DEEPUM_STREAM_ORDERED_PREFETCH: deprecated, use mode "
                             "(\"fast\" and \"safe\" prefetch, \"evict\" does not)\n") != std::string::npos);
}

TEST_CASE("the text form fits 80 columns, however long the values and warnings") {
  const std::string long_path = "/" + std::string(150, 'd') + "/deepum-%p.log";
  const std::string text = cfg::render_text(
      load_with({{"DEEPUM_LOG_FILE", long_path},
                 {"DEEPUM_TRACE_FILE", "/tmp/a b c d e f g h i j k l m n o p q r s t u v w x y z"}},
                {"DEEPUM_" + std::string(300, 'W')}));
  for (const std::string& line : lines_of(text)) {
    CAPTURE(line);
    CHECK(line.size() <= cfg::kRenderWidth);
  }
  // The long value wraps under the value column and loses nothing.
  std::string joined;
  bool in_value = false;
  for (const std::string& line : lines_of(text)) {
    if (line.starts_with("* log_file")) in_value = true;
    if (in_value && !line.starts_with("* log_file") && !line.starts_with(std::string(43, ' '))) break;
    if (in_value) joined += line.substr(43);
  }
  CHECK(joined == long_path + " (default \"\")");
}

TEST_CASE("the text form shows file origins, warnings, control characters escaped, and errors") {
  const std::string text = cfg::render_text(
      load_with({{"DEEPUM_STATS_FILE", "/tmp/s\n* enabled forged"}}, {"DEEPUM_RESIDENT_LIMT"}));
  CHECK(line_of_key(text, "stats_file") ==
        R"(* stats_file                      env      /tmp/s\n* enabled forged (default ""))");
  CHECK(text.find("* enabled forged\n") == std::string::npos);
  CHECK(unwrapped(text).find("\nwarning: environment DEEPUM_RESIDENT_LIMT: not a variable deepum reads, "
                             "ignored (did you mean DEEPUM_RESIDENT_LIMIT?)\n") != std::string::npos);

  const cfg::ConfigLoad from_file = cfg::load_config_text(R"({"log_level": "warn"})", "/etc/deepum.json",
                                                          [](const char*) -> const char* { return nullptr; });
  const std::string file_text = cfg::render_text(from_file);
  CHECK(line_of_key(file_text, "log_level") ==
        "* log_level                       file     warn (default info)");
  CHECK(file_text.find("file, /etc/deepum.json;") != std::string::npos);

  const std::string rejected = cfg::render_text(load_with({{"DEEPUM_ALLOC_LIMIT", "200"}}));
  CHECK(unwrapped(rejected).starts_with(
      R"(deepum configuration rejected: deepum: environment DEEPUM_ALLOC_LIMIT="200": expected a unit after the )"
      R"(number, such as "200MiB" or "200GiB" ("200B" for bytes))"
      "\n"));
  CHECK(rejected.ends_with("Inside a program deepum would pass every call through untouched.\n"));
}

TEST_CASE("the JSON form gives each key's value, default and origin, typed, in table order") {
  const nlohmann::json document = nlohmann::json::parse(cfg::render_json(load_with(
      {{"DEEPUM_ALLOC_LIMIT", "16GiB"}, {"DEEPUM_SUMMARY", "false"}, {"DEEPUM_TRACE_FLUSH_MS", "2"}},
      {"DEEPUM_RESIDENT_LIMT"})));
  CHECK(document["ok"] == true);
  CHECK(document["error"].is_null());
  CHECK(document["secure_execution"] == false);
  CHECK(document["origin"] == "defaults + env (DEEPUM_ALLOC_LIMIT, DEEPUM_TRACE_FLUSH_MS, DEEPUM_SUMMARY)");
  REQUIRE(document["warnings"].size() == 1);
  const nlohmann::json& keys = document["keys"];
  CHECK(keys["alloc_limit"] == nlohmann::json{{"value", "16GiB"},
                                              {"default", "100%"},
                                              {"changed", true},
                                              {"origin", "environment"},
                                              {"source", "DEEPUM_ALLOC_LIMIT"}});
  CHECK(keys["summary"]["value"] == false);  // a JSON boolean
  CHECK(keys["summary"]["default"] == true);
  CHECK(keys["trace_flush_ms"]["value"] == 2);  // a JSON number
  CHECK(keys["tracing"] == nlohmann::json{{"value", "full"},
                                          {"default", "full"},
                                          {"changed", false},
                                          {"origin", "default"},
                                          {"source", nullptr}});
  // Every key, in the table's order.
  const std::string raw = cfg::render_json(load_with({}));
  std::size_t last = 0;
  for (const cfg::KeySpec& key : cfg::config_keys()) {
    CAPTURE(key.name);
    if (key.deprecated()) {  // only where set
      CHECK(raw.find("\"" + std::string(key.name) + "\"") == std::string::npos);
      continue;
    }
    std::string member = "\"";  // appended: "\"" + std::string trips GCC 12's false -Wrestrict at -O3
    member.append(key.name).append("\": {");
    const std::size_t at = raw.find(member);
    REQUIRE(at != std::string::npos);
    CHECK(at > last);
    last = at;
  }
}

TEST_CASE("the JSON form of a rejected configuration carries the error") {
  const nlohmann::json document =
      nlohmann::json::parse(cfg::render_json(load_with({{"DEEPUM_TRACING", "loud"}})));
  CHECK(document["ok"] == false);
  CHECK(document["error"] ==
        R"(deepum: environment DEEPUM_TRACING="loud": expected one of off, launches, kernels, full)");
}
