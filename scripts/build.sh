#!/usr/bin/env bash
# build.sh [BUILD_DIR] [extra cmake args...]: configures and builds deepum (by default the library,
# `deepum` and `deepum-sim`; -DDEEPUM_BUILD_TESTS=ON and -DDEEPUM_BUILD_BENCH=ON add the tests and
# the benchmark programs). Uses .deps/ for the header-only dependencies (scripts/fetch_deps.sh
# fills it where apt exists; carry it elsewhere). WARNINGS_AS_ERRORS=ON in the environment makes
# warnings errors (CI sets it; a user's build never needs it). DEEPUM_BUILD_TARGETS="a b": build
# only those targets (and what they need).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
[[ -d "$root/.deps/include" ]] || "$root/scripts/fetch_deps.sh"
generator=()
# Ninja when available, unless the build folder was configured with another generator.
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
werror=()
if [[ -n ${WARNINGS_AS_ERRORS:-} ]]; then werror=(-DDEEPUM_WARNINGS_AS_ERRORS="$WARNINGS_AS_ERRORS"); fi
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${werror[@]}" "$@" >/dev/null
targets=()
for target in ${DEEPUM_BUILD_TARGETS:-}; do targets+=(--target "$target"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"
