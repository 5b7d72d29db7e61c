// The results of a replay, as a text table and as JSON. Integers only (nanoseconds, bytes), so the
// JSON of two replays of one trace is byte-identical.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deepum/sim/engine.hpp"
#include "deepum/sim/volume_bound.hpp"

namespace deepum::sim {

struct ReplayReport {
  std::string trace;  // as named on the command line
  std::uint64_t kernels = 0;
  std::uint32_t iterations = 1;         // measured ones (after the warm-up)
  std::uint32_t warmup_iterations = 0;  // replayed before them, not counted
  std::uint64_t footprint_bytes = 0;    // distinct blocks touched x 2 MB
  std::uint64_t capacity_bytes = 0;     // as simulated (whole blocks)
  std::uint64_t compute_ns = 0;         // of the measured iterations
  MachineModel machine;
  // results[i].stats cover the measured iterations only.
  std::vector<SimResult> results;
  // Belady's MIN over the measured iterations at this capacity: the least any victim choice moves.
  std::optional<VolumeBound> belady;
  // What each result's victims cost over the measured iterations (one per result), or empty.
  std::vector<VictimCost> victims;
};

// max(compute, H2D bytes / prefetch H2D rate + D2H bytes / prefetch D2H rate) with the oracle's
// bytes: what no schedule can beat given that traffic (the larger transfer time instead of the
// sum where the machine's migrations overlap). nullopt without an oracle result.
std::optional<std::uint64_t> floor_ns(const ReplayReport& report);

std::string format_text(const ReplayReport& report);
std::string format_json(const ReplayReport& report);

}  // namespace deepum::sim
