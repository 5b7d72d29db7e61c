#!/usr/bin/env bash
# fuzz.sh [SECONDS]: builds the libFuzzer targets of fuzz/ (clang, ASan and UBSan; only the readers
# and the libraries they need) in build-fuzz/, runs each for SECONDS (default 60) from its corpus
# in fuzz/corpus/ (as many at once as there are cores), and prints the executions per target.
# Fails on any crash, sanitizer report, leak, timeout or out-of-memory; the input that caused it is
# kept in build-fuzz/fuzz/artifacts/. New inputs found are not added to the repository's corpus.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${DEEPUM_FUZZ_BUILD:-$root/build-fuzz}
targets=(trace_reader config machine_model perfetto_json)
[[ -d "$root/.deps/include" ]] || "$root/scripts/fetch_deps.sh"
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2; exit 1; }
generator=()
if [[ ! -f "$build/CMakeCache.txt" ]] && command -v ninja >/dev/null; then generator=(-G Ninja); fi
# -O1 with line tables: quick to build, symbolized reports; asserts stay on (no NDEBUG).
CC=clang CXX=clang++ cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DDEEPUM_FUZZ=ON \
  -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$build/fuzz/artifacts"
run() {
  local target=$1
  mkdir -p "$work/$target"
  # The first corpus folder takes the new inputs; the repository's is only read.
  "$build/fuzz/fuzz_$target" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/fuzz/artifacts/$target-" \
    "$work/$target" "$root/fuzz/corpus/$target" >"$work/$target.log" 2>&1
}
pids=()
status=0
for target in "${targets[@]}"; do
  run "$target" &
  pids+=($!)
  if ((${#pids[@]} >= $(nproc))); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done

for target in "${targets[@]}"; do
  log="$work/$target.log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  if grep -qE '^==[0-9]+==ERROR|^SUMMARY: |runtime error:|^==[0-9]+== ERROR: libFuzzer' "$log" || [[ -z "$runs" ]]; then
    echo "fuzz: $target FAILED; its log:" >&2
    tail -60 "$log" >&2
    status=1
  else
    printf 'fuzz: %-14s %12s executions in %s s\n' "$target" "$runs" "$seconds"
  fi
done
exit "$status"
