#include "deepum/sim/machine_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <vector>

#include "deepum/config/config.hpp"
#include "deepum/core/input_file.hpp"
#include "deepum/core/trace_file.hpp"

namespace deepum::sim {

MachineModel MachineModel::h200() {
  MachineModel m;
  m.capacity_bytes = std::uint64_t{139} << 30;  // what an H200 leaves to a program, about 139 GiB
  m.prefetch_h2d_gb_per_s = 49.0;               // one 2 GiB range: 46-51 GB/s
  m.prefetch_d2h_gb_per_s = 15.0;               // one 2 GiB range: 10-20 GB/s
  m.prefetch_h2d_call_us = 110.0;               // 1024 separate 2 MB calls: ~110 us of host time each
  m.prefetch_d2h_call_us = 230.0;               // ... and ~230 us to the host
  m.fault_h2d_gb_per_s = 13.0;                  // fault-driven migration, second pass (4-8 on first touch)
  m.evict_d2h_gb_per_s = 10.0;                  // not measured alone: the low end of prefetch D2H
  m.fault_us = 27.0;                            // one GPU fault on a new 2 MB block
  m.discard_call_us = 110.0;                    // assumed equal to a prefetch call
  m.discard_gb_per_s = 268.0;                   // 2 GiB discarded in 8 ms
  // Copies between managed memory and pinned memory take turns, whichever streams they are on
  // (swap_call_probe: 256 MiB out and 256 MiB in, 9.6-10.0 ms together, 5.5 and 5.7-6.5 alone).
  m.migrations_overlap = false;
  m.copies_overlap = true;  // staged through device memory: 256 MiB each way in 5.6 ms
  m.launch_us = 5.0;        // assumed: a PyTorch operation's host time, a few us
  // swap_call_probe, 256 MiB in 2 MB blocks queued behind other work, staged through device
  // memory both ways at once: 47.9 GB/s each way (batched, one way: in 39-44, out 48.8-49.1
  // GB/s, 0.48-0.69 ms of host time).
  m.copy_h2d_gb_per_s = 47.9;
  m.copy_d2h_gb_per_s = 47.9;
  m.copy_call_us = 4.3;
  m.place_call_us = 34.6;               // the H100's (um_move_probe place_in_2MiB_calls)
  m.place_gb_per_s = 300.0;             // swap_call_probe place_held: 256 MiB in 0.60-0.85 ms
  m.swap_holds_thread = false;          // the swap is issued by deepum's eviction thread
  m.swap_room_waits_for_copies = true;  // its drop waits for its copies (drop_after_copies)
  // swap_call_probe: 256 MiB placed in 3.8-4.0 ms beside a copy out, 0.29 ms alone; a drop beside
  // a copy returned when the copy ended (4.5 ms). GPT-2 124M at 2x on an H100 held the program's
  // thread 2.8 s in placements and drops; replayed, 2.4 s with this, 0.08 s without.
  m.place_holds_thread = true;
  return m;
}

namespace {
// Nanoseconds as a whole count, the largest for anything past it (or not a number): a converted
// double out of range is undefined behaviour.
std::uint64_t saturated_ns(double ns) {
  constexpr double kLimit = 18446744073709549568.0;  // the largest double below 2^64
  if (!(ns > 0.0)) return 0;
  return ns >= kLimit ? UINT64_MAX : static_cast<std::uint64_t>(ns);
}
}  // namespace

std::uint64_t transfer_ns(std::uint64_t bytes, double gb_per_s) {
  if (bytes == 0) return 0;
  return saturated_ns(std::ceil(static_cast<double>(bytes) / gb_per_s));
}

std::uint64_t us_to_ns(double us) { return saturated_ns(std::round(us * 1000.0)); }

namespace {

using Json = nlohmann::json;

// The figures a model may hold: host times up to a second per call and rates of at least 1 MB/s,
// so that a simulated time stays far from overflowing.
struct Bounds {
  double low, high;
  std::string_view text;
};
constexpr Bounds kHostTime{0.0, 1e6, "0 to 1000000 us"};
constexpr Bounds kRate{1e-3, std::numeric_limits<double>::max(), "a finite rate of at least 0.001 GB/s"};

struct DoubleKey {
  std::string_view name;
  double MachineModel::*field;
  const Bounds& bounds;
};

constexpr DoubleKey kDoubleKeys[] = {
    {"prefetch_h2d_gb_per_s", &MachineModel::prefetch_h2d_gb_per_s, kRate},
    {"prefetch_d2h_gb_per_s", &MachineModel::prefetch_d2h_gb_per_s, kRate},
    {"prefetch_h2d_call_us", &MachineModel::prefetch_h2d_call_us, kHostTime},
    {"prefetch_d2h_call_us", &MachineModel::prefetch_d2h_call_us, kHostTime},
    {"fault_h2d_gb_per_s", &MachineModel::fault_h2d_gb_per_s, kRate},
    {"evict_d2h_gb_per_s", &MachineModel::evict_d2h_gb_per_s, kRate},
    {"fault_us", &MachineModel::fault_us, kHostTime},
    {"discard_call_us", &MachineModel::discard_call_us, kHostTime},
    {"discard_gb_per_s", &MachineModel::discard_gb_per_s, kRate},
    {"launch_us", &MachineModel::launch_us, kHostTime},
    {"copy_h2d_gb_per_s", &MachineModel::copy_h2d_gb_per_s, kRate},
    {"copy_d2h_gb_per_s", &MachineModel::copy_d2h_gb_per_s, kRate},
    {"copy_call_us", &MachineModel::copy_call_us, kHostTime},
    {"place_call_us", &MachineModel::place_call_us, kHostTime},
    {"place_gb_per_s", &MachineModel::place_gb_per_s, kRate},
};
// Past any GPU: no address space holds more.
constexpr std::uint64_t kMaxCapacityBytes = core::kTraceAddressLimit;
// A machine model is a few hundred bytes; a file far larger is not one.
constexpr std::uint64_t kMaxMachineFileBytes = std::uint64_t{1} << 20;
struct BoolKey {
  std::string_view name;
  bool MachineModel::*field;
};
constexpr BoolKey kBoolKeys[] = {
    {"migrations_overlap", &MachineModel::migrations_overlap},
    {"swap_holds_thread", &MachineModel::swap_holds_thread},
    {"swap_room_waits_for_copies", &MachineModel::swap_room_waits_for_copies},
    {"place_holds_thread", &MachineModel::place_holds_thread},
    {"copies_overlap", &MachineModel::copies_overlap},
};
constexpr std::string_view kCapacityKey = "capacity_bytes";

std::string known_keys() {
  std::string keys(kCapacityKey);
  for (const DoubleKey& key : kDoubleKeys) keys += ", " + std::string(key.name);
  for (const BoolKey& key : kBoolKeys) keys += ", " + std::string(key.name);
  return keys;
}

std::string type_name(const Json& value) { return value.type_name(); }

MachineLoad failure(std::string_view name, const std::string& what) {
  return MachineLoad{std::nullopt, std::string(name) + ": " + what};
}

std::string format_double(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

}  // namespace

MachineLoad parse_machine_model(std::string_view json_text, std::string_view name) {
  Json document;
  try {
    document = Json::parse(json_text.begin(), json_text.end());
  } catch (const Json::exception& e) {  // out_of_range too: a number past a double's range (1E400)
    return failure(name, std::string("not valid JSON: ") + e.what());
  }
  if (!document.is_object()) {
    return failure(name, "expected a JSON object of machine-model keys, got " + type_name(document));
  }
  MachineModel model = MachineModel::h200();
  for (const auto& [key, value] : document.items()) {
    if (key == kCapacityKey) {
      if (value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() > 0)) {
        model.capacity_bytes = value.get<std::uint64_t>();
      } else if (value.is_string()) {
        std::string why;
        const auto size = config::parse_size(value.get<std::string>(), &why);
        if (!size || size->is_percent()) {
          return failure(
              name, "key '" + key + "': " + (size ? std::string("a percentage has no meaning here") : why));
        }
        model.capacity_bytes = size->bytes();
      } else {
        return failure(name, "key '" + key +
                                 "': expected a byte count (a positive integer or a size such "
                                 "as \"80GiB\"), got " +
                                 type_name(value));
      }
      if (model.capacity_bytes < (std::uint64_t{2} << 20)) {
        return failure(name, "key '" + key + "': the GPU must hold at least one 2 MB block");
      }
      if (model.capacity_bytes > kMaxCapacityBytes) {
        return failure(name, "key '" + key + "': " + std::to_string(model.capacity_bytes) +
                                 " bytes is more than any address space holds (2^57 bytes)");
      }
      continue;
    }
    if (const auto flag =
            std::find_if(std::begin(kBoolKeys), std::end(kBoolKeys),
                         [&wanted = key](const BoolKey& candidate) { return candidate.name == wanted; });
        flag != std::end(kBoolKeys)) {
      if (!value.is_boolean())
        return failure(name, "key '" + key + "': expected true or false, got " + type_name(value));
      model.*(flag->field) = value.get<bool>();
      continue;
    }
    const DoubleKey* known = nullptr;
    for (const DoubleKey& candidate : kDoubleKeys) {
      if (candidate.name == key) known = &candidate;
    }
    if (known == nullptr) {
      return failure(name, "unknown key '" + key + "'; the keys are: " + known_keys());
    }
    if (!value.is_number()) {
      return failure(name, "key '" + key + "': expected a number, got " + type_name(value));
    }
    const double number = value.get<double>();
    const Bounds& bounds = known->bounds;
    if (!(number >= bounds.low && number <= bounds.high)) {
      return failure(name,
                     "key '" + key + "': expected " + std::string(bounds.text) + ", got " + value.dump());
    }
    model.*(known->field) = number;
  }
  return MachineLoad{model, {}};
}

MachineLoad load_machine_model(const std::string& path) {
  std::string error;
  const std::optional<std::string> text = core::read_regular_file(path, kMaxMachineFileBytes, error);
  if (!text) return MachineLoad{std::nullopt, error};
  return parse_machine_model(*text, path);
}

std::string machine_model_json(const MachineModel& model) {
  std::string out = "{\n  \"capacity_bytes\": " + std::to_string(model.capacity_bytes);
  for (const DoubleKey& key : kDoubleKeys) {
    out += ",\n  \"" + std::string(key.name) + "\": " + format_double(model.*(key.field));
  }
  for (const BoolKey& key : kBoolKeys)
    out += ",\n  \"" + std::string(key.name) + "\": " + (model.*(key.field) ? "true" : "false");
  out += "\n}\n";
  return out;
}

}  // namespace deepum::sim
