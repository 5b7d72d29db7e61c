#!/bin/bash
# sim-split.sh BASE_SIM SPLIT_SIM (on the CPU, from the repository root): deepum-sim of ce22267
# or e1274c9, which replay every trace alike (BASE_SIM), and of ce22267 with split.patch
# (SPLIT_SIM): the seventeen measured points, then generated sweeps of other shapes and generated
# GPT-2 XL and 7B steps at 1.5x, 2x and 3x; "point base split" in ms a step, sim/machines/h100.json.
set -uo pipefail
here=bench/results/2026-11-29-h200-split-batches
bash bench/results/2026-11-29-h200-spare-room/sim-points.sh "$1" "$2"
bash bench/results/2026-11-29-h200-crash-hunt/sim-sweeps.sh "$1" "$2"
dir=$(mktemp -d)
"$2" generate --model gpt2-xl --batch 4 --seq 1024 --iterations 5 --out "$dir/gpt2-xl.dtrace" > /dev/null
"$2" generate --model 7b --batch 1 --seq 2048 --iterations 5 --out "$dir/7b.dtrace" > /dev/null
step() {  # SIM TRACE RATIO
  "$1" replay "$2" --machine sim/machines/h100.json --warmup 2 --oversubscription "$3" --policy deepum-swap \
    2>/dev/null | awk '$1 == "deepum-swap" && NF > 5 {print $2}'
}
for t in gpt2-xl 7b; do
  for r in 1.5 2 3; do echo "$t-${r}x $(step "$1" "$dir/$t.dtrace" $r) $(step "$2" "$dir/$t.dtrace" $r)"; done
done
rm -rf "$dir"
