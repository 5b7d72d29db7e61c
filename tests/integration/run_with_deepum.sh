#!/usr/bin/env bash
# run_with_deepum.sh LIB STATS_JSON PROGRAM ARGS...: runs a CUDA program under libdeepum.so and checks,
# from deepum's own statistics file, that its allocations were intercepted and made managed; with
# EXPECT_SWAPPED set, that swaps happened; with EXPECT_VALUE_WAIT_HOLDS=N, that stream memory waits held
# the engine's moves for exactly N operations; and with EXPECT_PEAK_AT_MOST, that residency stayed under it.
set -euo pipefail
lib=$1 stats=$2
shift 2
source "$(dirname "$0")/gpu_available.sh"
rm -f "$stats"
set +e
LD_PRELOAD="$lib" DEEPUM_STATS_FILE="$stats" DEEPUM_LOG_LEVEL="${DEEPUM_LOG_LEVEL:-info}" "$@"
status=$?
set -e
[[ $status -eq 0 ]] || { echo "FAIL: $1 exited with $status"; exit "$status"; }
[[ -s "$stats" ]] || { echo "FAIL: deepum wrote no statistics file ($stats)"; exit 1; }
python3 - "$stats" <<'PY'
import json, os, sys
stats = json.load(open(sys.argv[1]))
allocations = stats["managed_allocations"]
print(f"deepum statistics: {allocations} managed allocations, calls: "
      + ", ".join(f"{k}={v['calls']}" for k, v in sorted(stats["calls"].items())))
if allocations == 0:
    sys.exit("FAIL: deepum made no managed allocation, so the program was not intercepted")
if stats["live_managed_bytes"] != 0:
    sys.exit(f"FAIL: {stats['live_managed_bytes']} managed bytes still live at exit; the program frees all")
if os.environ.get("EXPECT_SWAPPED"):
    swapped = stats.get("engine", {}).get("moves", {}).get("swapped_out_bytes", 0)
    print(f"swapped out: {swapped} bytes")
    if swapped == 0:
        sys.exit("FAIL: nothing was swapped, so the moves under test never happened")
if os.environ.get("EXPECT_VALUE_WAIT_HOLDS"):
    # Exactly the operations enqueued while a wait could still wait: fewer, a hold released early;
    # more, one never released.
    held, expected = stats.get("engine", {}).get("held_by_value_waits", 0), int(os.environ["EXPECT_VALUE_WAIT_HOLDS"])
    print(f"operations held by stream memory waits: {held}, expected {expected}")
    if held != expected:
        sys.exit(f"FAIL: {held} operations were held by stream memory waits, not {expected}")
most = os.environ.get("EXPECT_PEAK_AT_MOST")
if most:
    # Residency by the migration records in time order: what was on the GPU. The live estimate can
    # read higher (prefetches count when ordered, before the evictions making room finish) or lower
    # (records arrive late); it is printed, not checked.
    tracing = stats.get("tracing", {})
    if "peak_resident_bytes" not in tracing:
        sys.exit("FAIL: the statistics have no peak_resident_bytes (residency by records in time order)")
    peak = tracing["peak_resident_bytes"]
    if peak == 0:
        sys.exit("FAIL: no migration was replayed in time order, so the peak measures nothing")
    print(f"peak resident: {peak} bytes by the records in time order "
          f"({tracing.get('peak_estimated_resident_bytes', 0)} by the live estimate), limit {most}")
    if peak > int(most):
        sys.exit(f"FAIL: residency reached {peak} bytes, over {most}")
PY
