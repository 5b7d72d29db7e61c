// The simulator's machine model: the H200 preset, transfer-time arithmetic, and the JSON overrides
// with their errors.
#include <doctest/doctest.h>

#include <string>

#include "deepum/sim/machine_model.hpp"

using namespace deepum::sim;

TEST_CASE("sim machine: the H200 preset carries the measured figures") {
  const MachineModel m = MachineModel::h200();
  CHECK(m.capacity_bytes == (std::uint64_t{139} << 30));
  CHECK(m.prefetch_h2d_gb_per_s == doctest::Approx(49.0));
  CHECK(m.prefetch_d2h_gb_per_s == doctest::Approx(15.0));
  CHECK(m.prefetch_h2d_call_us == doctest::Approx(110.0));
  CHECK(m.prefetch_d2h_call_us == doctest::Approx(230.0));
  CHECK(m.fault_h2d_gb_per_s == doctest::Approx(13.0));
  CHECK(m.fault_us == doctest::Approx(27.0));
  // The driver's moves take turns; deepum's swap copies, staged through device memory, do not.
  CHECK_FALSE(m.migrations_overlap);
  CHECK(m.copies_overlap);
  CHECK(m.copy_d2h_gb_per_s == doctest::Approx(47.9));
  CHECK(m.copy_h2d_gb_per_s == doctest::Approx(47.9));
}

TEST_CASE("sim machine: transfer time is bytes over GB/s in nanoseconds, rounded up") {
  CHECK(transfer_ns(0, 49.0) == 0);
  CHECK(transfer_ns(2'000, 2.0) == 1'000);
  CHECK(transfer_ns(std::uint64_t{2} << 20, 2.0) == 1'048'576);
  CHECK(transfer_ns(std::uint64_t{2} << 20, 49.0) == 42'800);   // 42799.02 -> 42800
  CHECK(transfer_ns(std::uint64_t{2} << 20, 15.0) == 139'811);  // 139810.13 -> 139811
  CHECK(us_to_ns(110.0) == 110'000);
  CHECK(us_to_ns(0.0015) == 2);
  // A 2 GiB prefetch: one call's host time, then the link: about 48.7 GB/s in all.
  const MachineModel m = MachineModel::h200();
  const std::uint64_t bytes = std::uint64_t{2} << 30;
  const double ns =
      static_cast<double>(us_to_ns(m.prefetch_h2d_call_us) + transfer_ns(bytes, m.prefetch_h2d_gb_per_s));
  CHECK(static_cast<double>(bytes) / ns == doctest::Approx(48.7).epsilon(0.01));
}

TEST_CASE("sim machine: JSON overrides keys and keeps the rest") {
  const MachineLoad load = parse_machine_model(
      R"({"capacity_bytes": "40GiB", "prefetch_h2d_gb_per_s": 25, "fault_us": 0})", "m.json");
  REQUIRE_MESSAGE(load.model.has_value(), load.error);
  CHECK(load.model->capacity_bytes == (std::uint64_t{40} << 30));
  CHECK(load.model->prefetch_h2d_gb_per_s == doctest::Approx(25.0));
  CHECK(load.model->fault_us == doctest::Approx(0.0));
  CHECK(load.model->prefetch_d2h_gb_per_s == doctest::Approx(15.0));
  const MachineLoad overlap = parse_machine_model(R"({"migrations_overlap": true})", "m.json");
  REQUIRE(overlap.model.has_value());
  CHECK(overlap.model->migrations_overlap);
  const MachineLoad overlap_again = parse_machine_model(machine_model_json(*overlap.model), "again.json");
  REQUIRE(overlap_again.model.has_value());
  CHECK(overlap_again.model->migrations_overlap);
  const MachineLoad turns = parse_machine_model(R"({"copies_overlap": false})", "m.json");
  REQUIRE(turns.model.has_value());
  CHECK_FALSE(turns.model->copies_overlap);
  CHECK_FALSE(parse_machine_model(machine_model_json(*turns.model), "again.json").model->copies_overlap);
  const MachineLoad bytes = parse_machine_model(R"({"capacity_bytes": 4194304})", "m.json");
  REQUIRE(bytes.model.has_value());
  CHECK(bytes.model->capacity_bytes == 4'194'304);
  // The JSON form reads back to the same model.
  const MachineLoad again = parse_machine_model(machine_model_json(*load.model), "again.json");
  REQUIRE(again.model.has_value());
  CHECK(*again.model == *load.model);
}

TEST_CASE("sim machine: errors name the file and the key") {
  const auto error_of = [](const std::string& text) {
    const MachineLoad load = parse_machine_model(text, "machine.json");
    CHECK_FALSE(load.model.has_value());
    return load.error;
  };
  std::string e = error_of(R"({"prefetch_h2d_gb_per_s": 49, "link_speed": 3})");
  CHECK(e.starts_with("machine.json: unknown key 'link_speed'"));
  CHECK(e.find("prefetch_d2h_gb_per_s") != std::string::npos);  // lists the keys
  e = error_of(R"({"fault_us": "fast"})");
  CHECK(e == "machine.json: key 'fault_us': expected a number, got string");
  e = error_of(R"({"prefetch_h2d_gb_per_s": 0})");
  CHECK(e ==
        "machine.json: key 'prefetch_h2d_gb_per_s': expected a finite rate of at least 0.001 GB/s, got 0");
  e = error_of(R"({"fault_us": -1})");
  CHECK(e == "machine.json: key 'fault_us': expected 0 to 1000000 us, got -1");
  e = error_of(R"({"capacity_bytes": true})");
  CHECK(e.starts_with("machine.json: key 'capacity_bytes': expected a byte count"));
  e = error_of(R"({"capacity_bytes": "lots"})");
  CHECK(e.starts_with("machine.json: key 'capacity_bytes': "));
  e = error_of(R"({"migrations_overlap": 1})");
  CHECK(e == "machine.json: key 'migrations_overlap': expected true or false, got number");
  e = error_of(R"({"capacity_bytes": 1024})");
  CHECK(e == "machine.json: key 'capacity_bytes': the GPU must hold at least one 2 MB block");
  e = error_of(R"({"fault_us": 27,)");
  CHECK(e.starts_with("machine.json: not valid JSON: "));
  e = error_of("[1, 2]");
  CHECK(e == "machine.json: expected a JSON object of machine-model keys, got array");
  const MachineLoad missing = load_machine_model("/nonexistent/deepum-machine.json");
  CHECK(missing.error == "/nonexistent/deepum-machine.json: cannot open: No such file or directory");
}
