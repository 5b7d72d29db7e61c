#!/bin/bash
# sim-launch-order.sh BEFORE_SIM AFTER_SIM (on the CPU, from the repository root): deepum-sim of
# e1274c9 (BEFORE_SIM) and of the commit that replays operations in launch order with their shapes
# (AFTER_SIM): this folder's traces at 2x (ten steps, four of warm-up), then the seventeen
# measured points of the committed traces ("point before after", ms a step).
set -uo pipefail
here=bench/results/2026-11-29-h200-zoo-traces
dir=$(mktemp -d)
for t in resnet152 llama-1b; do
  xz -dc "$here/$t-2x.dtrace.xz" > "$dir/$t.dtrace"
  for build in "before|$1" "after|$2"; do
    echo "== $t, ${build%%|*}"
    "${build#*|}" replay "$dir/$t.dtrace" --machine sim/machines/h100.json --iterations 10 --warmup 4 \
      --oversubscription 2 --policy deepum-swap 2>&1 | grep -E "^deepum-swap"
  done
done
echo "== the seventeen measured points: before, after"
bash bench/results/2026-11-29-h200-spare-room/sim-points.sh "$1" "$2"
rm -rf "$dir"
