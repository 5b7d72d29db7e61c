#!/bin/bash
# The simulator's replays at 2x, phase by phase (deepum-sim replay --timeline, then
# bench/phase_breakdown.py): the 1B decoder from both committed traces of it, recorded with no
# resident limit (../2026-11-28-h200-traces/llama-1b.dtrace.xz, five steps) and recorded at 2x
# (../2026-11-30-h200-step-phases/call3-llama-1b-2x.dtrace.xz, eight steps), then BERT-large and
# T5-base from theirs of 2026-11-28 (no limit). Their measured phases at 2x are call 3 of
# ../2026-11-30-h200-step-phases.
#   sim-phases.sh BUILD_DIR   (a build with deepum-sim)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
t=$(mktemp -d)
replay() {  # NAME TRACE.xz ITERATIONS WARMUP
  xz -dc "$2" > "$t/$1.dtrace"
  echo "== $1: deepum-sim replay --oversubscription 2 --policy deepum-swap --iterations $3 --warmup $4"
  "$BUILD/bin/deepum-sim" replay "$t/$1.dtrace" --iterations "$3" --warmup "$4" --oversubscription 2 \
    --policy deepum-swap --timeline "$t/$1.json" | sed -n 2,4p | cut -c1-400
  python3 "$root/bench/phase_breakdown.py" "$t/$1.json"
}
BUILD=$1
replay no-limit "$here/../2026-11-28-h200-traces/llama-1b.dtrace.xz" 5 2
replay at-2x "$here/../2026-11-30-h200-step-phases/call3-llama-1b-2x.dtrace.xz" 8 3
replay bert-large "$here/../2026-11-28-h200-traces/bert-large.dtrace.xz" 4 2
replay t5-base "$here/../2026-11-28-h200-traces/t5-base.dtrace.xz" 5 2
rm -rf "$t"
