#!/bin/bash
# sim-checks.sh BASE_SIM NEW_SIM (on the CPU, from the repository root): the traces of
# ../2026-11-28-h200-traces/sim-compare.sh (unpacked into /tmp as it does) replayed at 2x and 3x
# with sim/machines/h100.json by BASE_SIM (b7db059) and NEW_SIM (a swap's drop on the eviction
# thread), the step in ms; GPT-2 at 3x as it was measured (the card whole, the resident limit a
# third of 11.18 GiB, as ../2026-11-28-h200-traces/sim-extra.sh).
set -uo pipefail
m=sim/machines/h100.json
step() {  # SIM TRACE RATIO
  local it=5 wu=2 size=(--oversubscription $3)
  case $2 in resnet|bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
  [[ $2 == gpt2 && $3 == 3 ]] && size=(--capacity 80GiB --limit 3.727GiB)
  "$1" replay /tmp/$2.dtrace --machine $m --iterations $it --warmup $wu "${size[@]}" --policy deepum-swap 2>/dev/null |
    awk '$1 == "deepum-swap" && NF > 5 {print $2; found=1} END {if (!found) print "-"}'
}
echo "| trace | ratio | base ms | new ms |"
echo "|---|---|---:|---:|"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  for r in 2 3; do echo "| $t | ${r}x | $(step "$1" $t $r) | $(step "$2" $t $r) |"; done
done
# The new simulator told that placements and drops do not hold the program's thread.
python3 -c "import json; m = json.load(open('$m')); m['place_holds_thread'] = False; json.dump(m, open('/tmp/no-hold.json', 'w'))"
m=/tmp/no-hold.json
echo
echo "| trace | 2x, NEW_SIM, place_holds_thread false |"
echo "|---|---:|"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do echo "| $t | $(step "$2" $t 2) |"; done
