#!/usr/bin/env bash
# test.sh: builds deepum with its tests and benchmark programs and runs every test: the full build
# (unit, preload, command line and, where a GPU exists, the gpu-labelled integration tests, which
# skip with a message elsewhere), a second build of the CUDA-free core and its unit tests under
# AddressSanitizer and UndefinedBehaviorSanitizer, and a third of the tests that run threads against
# each other under ThreadSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

"$root/scripts/build.sh" "$root/build" -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON
(cd "$root/build" && ctest --output-on-failure -j "$jobs")

"$root/scripts/build.sh" "$root/build-asan" -DDEEPUM_SANITIZE=ON -DDEEPUM_BUILD_TESTS=ON
(cd "$root/build-asan" && ctest --output-on-failure -j "$jobs")

# Only the threaded tests are built and run here: the target deepum_thread_tests and the ctest
# label `threads` (tests/CMakeLists.txt). GCC 12's ThreadSanitizer stops with "unexpected memory
# mapping" on kernels that randomise mmap with more than 28 bits; without randomisation it runs.
DEEPUM_BUILD_TARGETS=deepum_thread_tests "$root/scripts/build.sh" "$root/build-tsan" -DDEEPUM_TSAN=ON \
  -DDEEPUM_BUILD_TESTS=ON
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then no_aslr=(setarch "$(uname -m)" -R); fi
(cd "$root/build-tsan" && "${no_aslr[@]}" ctest --output-on-failure -j "$jobs" -L threads)
