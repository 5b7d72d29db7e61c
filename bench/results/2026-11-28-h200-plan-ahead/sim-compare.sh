#!/bin/bash
# sim-compare.sh OLD NEW: two builds of deepum-sim (OLD: fce2d17's) on the committed traces at 2x
# and 3x, the simulated step in ms; on the CPU.
set -uo pipefail
old=$1 new=$2
here=$(dirname "$0")
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
xz -dc "$here/../2026-11-26-engine-h200/gpt2-124m-b8.dtrace.xz" > "$traces/gpt2.dtrace"
xz -dc "$here/../2026-11-26-engine-h200/resnet152-b32.dtrace.xz" > "$traces/resnet.dtrace"
for t in llama-1b bert-large t5-base densenet201; do
  xz -dc "$here/../2026-11-28-h200-traces/$t.dtrace.xz" > "$traces/$t.dtrace"
done
"$old" generate --model sweep --iterations 8 --out "$traces/sweep.dtrace" > /dev/null
step() {  # SIM TRACE R: the step in ms, or "-" where the trace cannot run at R
  local it=5 wu=2
  case $2 in resnet | bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
  "$1" replay "$traces/$2.dtrace" --iterations $it --warmup $wu --oversubscription "$3" --policy deepum-swap --json 2>/dev/null |
    python3 -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["policies"][0]["step_ns"] / 1e6))' 2>/dev/null || echo "-"
}
printf '%-12s %10s %10s %10s %10s\n' trace "2x old" "2x new" "3x old" "3x new"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  printf '%-12s %10s %10s %10s %10s\n' $t "$(step "$old" $t 2)" "$(step "$new" $t 2)" "$(step "$old" $t 3)" "$(step "$new" $t 3)"
done
echo "(simulated step ms; GPT-2 cannot run at 3x: one kernel names more than the GPU would hold)"
