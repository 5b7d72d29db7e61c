// Minimal checking for the integration test programs: every failed check prints and counts.
#pragma once

#include <cstdio>
#include <cstdlib>

inline int g_failures = 0;

#define CHECK_TRUE(cond, ...)                                     \
  do {                                                            \
    if (!(cond)) {                                                \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                                   \
      std::printf("\n");                                          \
      ++g_failures;                                               \
    }                                                             \
  } while (0)

inline int finish(const char* program) {
  if (g_failures == 0) {
    std::printf("PASS %s\n", program);
    return 0;
  }
  std::printf("%d check(s) failed in %s\n", g_failures, program);
  return 1;
}
