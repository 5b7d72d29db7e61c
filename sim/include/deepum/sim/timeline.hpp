// A replay's timeline (RunOptions::record_timeline) as a Chrome/Perfetto JSON trace laid out like
// the one deepum writes for a real run (docs/trace-format.md): the program's operations on the
// GPU process's first stream track, named by their kernel functions, and the simulated moves as
// copies ("memcpy HtoD", "memcpy DtoH", with their kind and bytes) on tracks of their own. The
// scripts that read deepum's traces (bench/phase_breakdown.py, bench/step_breakdown.py) read it
// as they read a measured run, so the two can be put side by side phase by phase.
#pragma once

#include <string>
#include <vector>

#include "deepum/sim/engine.hpp"
#include "deepum/sim/workload.hpp"

namespace deepum::sim {

std::string timeline_json(const Workload& workload, const std::vector<TimelineEvent>& timeline);

}  // namespace deepum::sim
