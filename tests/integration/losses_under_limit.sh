#!/usr/bin/env bash
# losses_under_limit.sh LIB SCRIPT ARGS...: trains natively, then under libdeepum.so with the
# resident limit at half the native footprint (peak reserved) and the environment the test sets,
# and requires the same per-step losses, bit for bit, and an exit summary with evictions (and what
# EXPECT_IN_SUMMARY matches, if set). Skips (77) without PyTorch and a GPU.
set -euo pipefail
lib=$1
shift
source "$(dirname "$0")/pytorch_available.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$python" "$@" --json "$work/native.json" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
limit=$("$python" -c "import json; print(json.load(open('$work/native.json'))['peak_reserved_bytes'] // 2)")
echo "native footprint halved: resident limit $limit bytes"
DEEPUM_RESIDENT_LIMIT=${limit}B LD_PRELOAD="$lib" "$python" "$@" --json "$work/deepum.json" 2>&1 | tee "$work/deepum.log"
"$python" - "$work/native.json" "$work/deepum.json" <<'PY'
import json, sys
native, deepum = (json.load(open(path)) for path in sys.argv[1:3])
if native["losses"] != deepum["losses"]:
    sys.exit(f"FAIL: losses differ\n native {native['losses']}\n deepum {deepum['losses']}")
print(f"losses identical over {len(native['losses'])} steps")
PY
grep -q "evictions before launches: [1-9]" "$work/deepum.log" || { echo "FAIL: nothing was evicted"; exit 1; }
# EXPECT_IN_SUMMARY: a pattern the exit summary must also hold (what the test's settings did).
if [[ -n ${EXPECT_IN_SUMMARY:-} ]]; then
  grep -Eq "$EXPECT_IN_SUMMARY" "$work/deepum.log" || { echo "FAIL: the summary lacks: $EXPECT_IN_SUMMARY"; exit 1; }
fi
