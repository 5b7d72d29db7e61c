#!/bin/bash
# sim-compare.sh OLD NEW: two builds of deepum-sim (OLD: fce2d17's) on the committed traces at 2x
# and 3x, the simulated step in ms; on the CPU.
set -uo pipefail
old=$1 new=$2
# shellcheck source=bench/sim_traces.sh
source "$(dirname "$0")/../../sim_traces.sh"
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
unpack_sim_traces "$traces" "$old"
step() {  # SIM TRACE R: the step in ms, or "-" where the trace cannot run at R
  # shellcheck disable=SC2046
  "$1" replay "$traces/$2.dtrace" $(sim_window "$2") --oversubscription "$3" --policy deepum-swap --json 2>/dev/null |
    python3 -c 'import json, sys; print("%.1f" % (json.load(sys.stdin)["policies"][0]["step_ns"] / 1e6))' 2>/dev/null || echo "-"
}
printf '%-12s %10s %10s %10s %10s\n' trace "2x old" "2x new" "3x old" "3x new"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  printf '%-12s %10s %10s %10s %10s\n' $t "$(step "$old" $t 2)" "$(step "$new" $t 2)" "$(step "$old" $t 3)" "$(step "$new" $t 3)"
done
echo "(simulated step ms; GPT-2 cannot run at 3x: one kernel names more than the GPU would hold)"
