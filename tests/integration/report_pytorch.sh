#!/usr/bin/env bash
# report_pytorch.sh LIB DEEPUM_CLI SCRIPT ARGS...: trains natively, then under libdeepum.so with the
# resident limit at half the native footprint and the environment the test sets, writing the trace
# and the statistics into one folder; then `deepum report` on that folder. The statistics must hold
# the program thread's launch times, the GPU's time from kernel records and a verdict on moves; the
# page every section, none short of its input. Prints the verdict and the launch times. Skips (77)
# without PyTorch and a GPU.
set -euo pipefail
lib=$1 cli=$2
shift 2
source "$(dirname "$0")/pytorch_available.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$@" --json "$work/native.json" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
limit=$("$python" -c "import json; print(json.load(open('$work/native.json'))['peak_reserved_bytes'] // 2)")
mkdir "$work/run"
DEEPUM_TRACE_FILE="$work/run/trace" DEEPUM_STATS_FILE="$work/run/stats.json" DEEPUM_RESIDENT_LIMIT=${limit}B \
  LD_PRELOAD="$lib" "$python" "$@" --json "$work/deepum.json" >"$work/deepum.log" 2>&1 ||
  { cat "$work/deepum.log"; exit 1; }
sed -n '/deepum summary:/,/deepum verdict:/p' "$work/deepum.log"
"$python" - "$work/run/stats.json" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
launch = stats["program_thread"]["launch_callback"]
gpu = stats["tracing"]["gpu_time"]
moves = stats["program_thread"]["move_calls_ns"]
print(f"program thread per launch: median {launch['p50_ns']} ns, p99 {launch['p99_ns']} ns over "
      f"{launch['count']} launches; in the driver's move calls {moves['total'] / 1e6:.1f} ms; "
      f"GPU waited {gpu['waited_ns'] / 1e6:.1f} ms after runnable ({gpu['waits_measured']} of "
      f"{gpu['executions']} measured), faults {gpu['fault_ns'] / 1e6:.1f} ms")
if launch["count"] == 0 or gpu["executions"] == 0 or gpu["waits_measured"] == 0:
    sys.exit("FAIL: launches untimed, or no kernel records to measure the GPU's time")
if stats["verdict"]["cause"] in ("untraced", "no_calls", "whole_gpu", "no_engine"):
    sys.exit(f"FAIL: no verdict on moves: {stats['verdict']}")
PY
"$cli" report "$work/run"
page=$work/run/deepum-report.html
for section in verdict residency time-split kernel-stalls program-thread counters; do
  grep -q "<section id=\"$section\">" "$page" || { echo "FAIL: the page has no $section section"; exit 1; }
done
if grep -o 'class="missing">[^<]*' "$page"; then
  echo "FAIL: sections of the page lack their input"
  exit 1
fi
echo "PASS: deepum report drew a real run ($(wc -c <"$page") bytes)"
