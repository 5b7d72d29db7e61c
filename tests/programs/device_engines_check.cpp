// device_engines_check: how operations find their device's engine (cuda/device_engines.hpp), with
// engines that were never started (no driver is called). Needs no GPU.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "deepum/cuda/device_engines.hpp"

using deepum::cuda::DeviceEngines;
using deepum::cuda::StreamOrderedEvictor;

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what);
    ++failures;
  }
}

std::unique_ptr<StreamOrderedEvictor> engine() {
  return std::make_unique<StreamOrderedEvictor>(std::uint64_t{1} << 30, std::uint64_t{1} << 27);
}

}  // namespace

int main() {
  DeviceEngines engines;
  check(engines.first() == nullptr && engines.of_context(0x10) == nullptr, "no engine before any is added");
  StreamOrderedEvictor* first = engines.add(0x10, 0, engine());
  StreamOrderedEvictor* second = engines.add(0x20, 1, engine());
  check(first != nullptr && second != nullptr && first != second, "each device gets its own engine");
  check(engines.of_context(0x10) == first && engines.of_context(0x20) == second, "found by context");
  check(engines.of_context(0) == first && engines.first() == first, "an unknown context (0) is the first's");
  check(engines.of_device(1) == second && engines.of_device(2) == nullptr, "found by device");
  // Another context of device 0 shares its engine; a context with none is remembered as such.
  check(engines.add_alias(0x30, 0, first) == first && engines.of_context(0x30) == first,
        "another context of a device shares its engine");
  check(
      engines.add(0x40, 3, nullptr) == nullptr && engines.knows(0x40) && engines.of_context(0x40) == nullptr,
      "a context without an engine is known and finds none");
  check(engines.add(0x20, 1, engine()) == nullptr && engines.of_context(0x20) == second,
        "a context is added once");
  check(engines.engines() == 2, "two engines counted, aliases and empty contexts left out");
  std::vector<std::uint64_t> visited;
  engines.for_each([&](StreamOrderedEvictor& each, int device, std::uint64_t context) {
    check(&each == (device == 0 ? first : second), "for_each pairs each engine with its device");
    visited.push_back(context);
  });
  check(visited == std::vector<std::uint64_t>{0x10, 0x20}, "for_each visits each engine once, in order");
  // Past kMaxContexts, a context gets nothing (the driver evicts there).
  for (std::uint64_t c = 0x100; c < 0x100 + DeviceEngines::kMaxContexts; ++c) engines.add(c, 4, nullptr);
  check(engines.add(0x999, 5, engine()) == nullptr && !engines.knows(0x999), "no room past kMaxContexts");
  if (failures != 0) return 1;
  std::puts("PASS: device engines found by context and device");
  return 0;
}
