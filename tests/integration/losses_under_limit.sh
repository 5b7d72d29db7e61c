#!/usr/bin/env bash
# losses_under_limit.sh LIB SCRIPT ARGS...: trains natively, then under libdeepum.so with the
# resident limit at half the native footprint (peak reserved) and the environment the test sets,
# and requires the same per-step losses, bit for bit, a summary ending in a verdict, and statistics
# (docs/stats-format.md) with evictions, timed launches and whatever else EXPECT_NONZERO names
# (fields, separated by spaces). Skips (77) without PyTorch and a GPU.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/pytorch_available.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$@" --json "$work/native.json" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
limit=$("$python" -c "import json; print(json.load(open('$work/native.json'))['peak_reserved_bytes'] // 2)")
echo "native footprint halved: resident limit $limit bytes"
DEEPUM_STATS_FILE="$work/stats.json" DEEPUM_RESIDENT_LIMIT=${limit}B LD_PRELOAD="$lib" "$python" "$@" \
  --json "$work/deepum.json" 2>&1 | tee "$work/deepum.log"
"$python" - "$work/native.json" "$work/deepum.json" <<'PY'
import json, sys
native, deepum = (json.load(open(path)) for path in sys.argv[1:3])
if native["losses"] != deepum["losses"]:
    sys.exit(f"FAIL: losses differ\n native {native['losses']}\n deepum {deepum['losses']}")
print(f"losses identical over {len(native['losses'])} steps")
PY
grep -q "deepum verdict: " "$work/deepum.log" || { echo "FAIL: the summary has no verdict"; exit 1; }
"$python" - "$work/stats.json" <<'PY'
import json, os, sys
stats = json.load(open(sys.argv[1]))
if stats.get("schema_version") != 2:
    sys.exit(f"FAIL: statistics schema_version {stats.get('schema_version')!r}, expected 2")
def field(path):
    value = stats
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            sys.exit(f"FAIL: the statistics have no {path}")
        value = value[key]
    return value
wanted = ["engine.moves.evictions", "program_thread.launch_callback.count"] + os.environ.get("EXPECT_NONZERO", "").split()
for path in wanted:
    if not field(path):
        sys.exit(f"FAIL: {path} is {field(path)!r}: the test's settings did not take effect")
launch = stats["program_thread"]["launch_callback"]
print(f"program thread per launch: median {launch['p50_ns']} ns, p99 {launch['p99_ns']} ns; "
      f"verdict ({stats['verdict']['cause']}): {stats['verdict']['text']}")
PY
