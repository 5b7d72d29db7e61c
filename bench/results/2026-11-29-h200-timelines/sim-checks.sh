#!/bin/bash
# sim-checks.sh BASE_SIM ROOM_SIM (on the CPU, from the repository root): the seven traces of
# ../2026-11-28-h200-traces/sim-compare.sh (unpacked into /tmp as it does) replayed at 2x and 3x
# with sim/machines/h100.json, the step in ms, by BASE_SIM (7ed95db) and ROOM_SIM (built with
# room-ahead.patch); then the 2026-11-26 GPT-2 trace at 2x by BASE_SIM with place_holds_thread as
# the machine has it and turned off.
set -uo pipefail
m=sim/machines/h100.json
step() {  # SIM TRACE RATIO [MACHINE]
  local it=5 wu=2
  case $2 in resnet|bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
  "$1" replay /tmp/$2.dtrace --machine "${4:-$m}" --iterations $it --warmup $wu --oversubscription $3 \
    --policy deepum-swap 2>/dev/null | awk '$1 == "deepum-swap" && NF > 5 {print $2; found=1} END {if (!found) print "-"}'
}
for sim in "$1" "$2"; do
  line="" logs=0 n=0
  for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
    for r in 2 3; do
      v=$(step "$sim" $t $r); line="$line $t-${r}x=$v"
      [[ $v != - ]] && { logs=$(python3 -c "import math; print($logs + math.log($v))"); n=$((n + 1)); }
    done
  done
  echo "$sim:$line geometric mean $(python3 -c "import math; print(round(math.exp($logs / $n), 1))") over $n"
done
python3 -c "import json; m = json.load(open('$m')); m['place_holds_thread'] = False; json.dump(m, open('/tmp/no-hold.json', 'w'))"
echo "GPT-2 2x, place_holds_thread as $m has it (true): $(step "$1" gpt2 2)"
echo "GPT-2 2x, place_holds_thread false: $(step "$1" gpt2 2 /tmp/no-hold.json)"
"$1" replay /tmp/gpt2.dtrace --machine $m --iterations 5 --warmup 2 --oversubscription 2 --policy deepum-swap 2>/dev/null |
  grep -o "the program's thread held [0-9.]* ms in placements and drops" | sed 's/^/GPT-2 2x, place_holds_thread true: /'
