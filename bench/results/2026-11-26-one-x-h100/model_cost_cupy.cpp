// The engine's model alone, on the CPU: what LaunchOrderedResidency::before_launch costs per launch
// in the zoo's CuPy loop's shape (16 arrays of 256 MiB, three launches an array, the first naming
// two arrays), with mode fast's moves, at a resident limit of the footprint / R.
//   g++ -O2 -std=c++20 -Icore/include -isystem .deps/include model_cost_cupy.cpp \
//       BUILD/core/libdeepum_core.a -o model_cost_cupy && ./model_cost_cupy 1 && ./model_cost_cupy 2
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "deepum/core/launch_ordered_residency.hpp"
using namespace deepum::core;
int main(int argc, char** argv) {
  const std::uint64_t kMiB = 1 << 20, kBase = 0x7f0000000000, arr = 256 * kMiB;
  const int arrays = 16;
  const double ratio = argc > 1 ? atof(argv[1]) : 1.0;
  LaunchOrderedOptions o{
      .prefetch = true, .discard_dead = true, .place_fresh = true, .swap = true, .swap_bytes = 64ull << 30};
  LaunchOrderedResidency m(static_cast<std::uint64_t>(arrays * arr / ratio),
                           static_cast<std::uint64_t>(arrays * arr / ratio / 8), o);
  for (int a = 0; a < arrays; ++a) m.on_range_allocated(kBase + a * arr, arr);
  double total = 0;
  int n = 0;
  for (int step = 0; step < 40; ++step) {
    for (int i = 0; i < arrays; ++i) {
      for (int op = 0; op < 3; ++op) {
        KernelLaunch l;
        l.pointer_count = op == 0 ? 2 : 1;
        l.pointers[0] = kBase + i * arr;
        l.extents[0] = arr;
        l.pointers[1] = kBase + ((i + 1) % arrays) * arr;
        l.extents[1] = arr;
        l.function = 100 + op;
        auto t0 = std::chrono::steady_clock::now();
        (void)m.before_launch(l);
        auto t1 = std::chrono::steady_clock::now();
        if (step >= 10) {
          total += std::chrono::duration<double, std::micro>(t1 - t0).count();
          ++n;
        }
      }
    }
  }
  printf("ratio %.1f: mean %.2f us per launch, loop %lu\n", ratio, total / n,
         (unsigned long)m.stats().loop_period);
}
