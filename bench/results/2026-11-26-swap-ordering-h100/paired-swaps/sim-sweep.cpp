// The sweep (tests/programs/sweep.cu: update(a_i, a_i+1), partial_sums(a_i), a copy of the sums
// to the host per array) built as a workload and replayed through the simulator's ordered policy
// (mode fast), the H200 preset with swap copies at 50 GB/s; prints the step time of the last four
// steps against the floor. Built against a build folder B of the tree under test:
//   g++ -std=c++20 -O1 -Isim/include -Icore/include -IB/core -I.deps/include sim-sweep.cpp \
//       B/sim/libdeepum_sim.a B/core/libdeepum_core.a B/config/libdeepum_config.a -o sim-sweep
//   sim-sweep [ARRAYS MIB RATIO STEPS EVICTIONS_AHEAD]   (default 16 256 2 8 1)
#include <cstdio>
#include <cstdlib>
#include "deepum/sim/engine.hpp"
#include "deepum/sim/ordered_policy.hpp"
#include "deepum/sim/policies.hpp"
#include "deepum/sim/workload.hpp"
using namespace deepum;
using namespace deepum::sim;
int main(int argc, char** argv) {
  const int arrays = argc > 1 ? atoi(argv[1]) : 16;
  const std::uint64_t mib = argc > 2 ? atoi(argv[2]) : 256;
  const double ratio = argc > 3 ? atof(argv[3]) : 2.0;
  const int steps = argc > 4 ? atoi(argv[4]) : 8;
  const int ahead = argc > 5 ? atoi(argv[5]) : 1;
  const std::uint64_t bytes = mib << 20, base = std::uint64_t{1} << 40, sums = base - (std::uint64_t{64} << 20);
  WorkloadBuilder b;
  for (int i = 0; i < arrays; ++i) b.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 1, base + i * bytes, bytes});
  b.add(core::RangeEvent{core::RangeEvent::Kind::allocated, 1, sums, 8192});
  std::uint64_t t = 1000, corr = 100;
  const std::uint64_t update_ns = bytes * 3 / 3000, sum_ns = bytes / 3000 + 5000;  // 3 TB/s
  auto kernel = [&](std::uint64_t key, std::uint64_t which, std::vector<std::uint64_t> ptrs, std::vector<std::uint64_t> ext, std::uint64_t ns) {
    core::KernelLaunch l; l.correlation_id = ++corr; l.function = key; l.execution_key = key * 1000 + which; l.host_time = t;
    l.pointer_count = ptrs.size(); for (size_t i = 0; i < ptrs.size(); ++i) { l.pointers[i] = ptrs[i]; l.extents[i] = ext[i]; }
    b.add(l); b.add(core::LaunchOperands{l.correlation_id, true, false, ptrs, ext});
    b.add(core::KernelExecution{.correlation_id = l.correlation_id, .start = t + 10000, .end = t + 10000 + ns});
    t += ns + 2000;
  };
  for (int i = 0; i < arrays; ++i) kernel(1, i, {base + i * bytes}, {bytes}, bytes / 3000);
  std::vector<std::uint32_t> step_start;
  std::uint32_t k = arrays;
  for (int s = 0; s < steps; ++s) {
    step_start.push_back(k);
    for (int i = 0; i < arrays; ++i) {
      const std::uint64_t a = base + i * bytes, n = base + ((i + 1) % arrays) * bytes;
      kernel(2, i, {a, n}, {bytes, bytes}, update_ns);
      kernel(3, i, {a, sums}, {bytes, 8192}, sum_ns);
      core::CopyLaunch c; c.correlation_id = ++corr; c.host_time = t; c.operand_count = 1; c.operands[0] = sums; c.bytes = 8192;
      b.add(c);
      core::KernelExecution e{.correlation_id = c.correlation_id, .start = t + 10000, .end = t + 12000};
      e.operation = core::GpuOperation::memcpy; e.copy_kind = 2; e.bytes = 8192; b.add(e);
      t += 4000; k += 3;
    }
  }
  const Workload w = b.finish();
  if (!b.error().empty()) { std::printf("workload: %s\n", b.error().c_str()); return 1; }
  MachineModel m = MachineModel::h200();
  m.copy_h2d_gb_per_s = m.copy_d2h_gb_per_s = 50.0;
  const std::uint64_t footprint = arrays * bytes + (2 << 20);
  const std::uint64_t limit = static_cast<std::uint64_t>(footprint / ratio) & ~((std::uint64_t{2} << 20) - 1);
  OrderedPolicyOptions o; o.limit_bytes = limit;
  o.moves.prefetch = o.moves.discard_dead = o.moves.place_fresh = o.moves.swap = true;
  o.moves.evictions_ahead = ahead;
  OrderedPolicy p(o);
  RunOptions ro; ro.window_start = step_start[steps - 4];
  const SimResult r = simulate(w, m, p, ro);
  const SimStats win = stats_between(r.before_window, r.stats);
  const double step_ms = win.total_ns / 4 / 1e6;
  const double native_ms = arrays * (update_ns + sum_ns + 16000) / 1e6;
  const double floor_ms = std::max(native_ms, (footprint - footprint / ratio) / 50.0 / 1e6);
  std::printf("whole run %.1f ms, in %.2f GiB out %.2f GiB, kernels %zu window from %u\n", r.stats.total_ns/1e6, r.stats.h2d_bytes/1073741824.0, r.stats.d2h_bytes/1073741824.0, w.kernels.size(), ro.window_start);
  std::printf("arrays %d x %llu MiB, %.1fx: step %.1f ms (floor %.1f, %.2fx); per step in %.2f GiB out %.2f GiB\n%s\n",
              arrays, (unsigned long long)mib, ratio, step_ms, floor_ms, step_ms / floor_ms,
              win.h2d_bytes / 4 / 1073741824.0, win.d2h_bytes / 4 / 1073741824.0, r.detail.c_str());
}
