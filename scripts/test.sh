#!/usr/bin/env bash
# test.sh: builds deepum with its tests and benchmark programs and runs every test: the full build
# (unit, preload, command line and, where a GPU exists, the gpu-labelled integration tests, which
# skip with a message elsewhere) and a second build of the CUDA-free core and its unit tests under
# AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

"$root/scripts/build.sh" "$root/build" -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON
(cd "$root/build" && ctest --output-on-failure -j "$jobs")

"$root/scripts/build.sh" "$root/build-asan" -DDEEPUM_SANITIZE=ON -DDEEPUM_BUILD_TESTS=ON
(cd "$root/build-asan" && ctest --output-on-failure -j "$jobs")
