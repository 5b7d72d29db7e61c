// Nanoseconds since a moment on the steady clock: what deepum's timers add to their counters.
#pragma once

#include <chrono>
#include <cstdint>

namespace deepum::core {

inline std::uint64_t ns_since(std::chrono::steady_clock::time_point start) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace deepum::core
