#!/bin/bash
# sim-traces.sh HEAD_SIM SHAPE_SIM DUMP_SIM (on the CPU, from the repository root): this folder's
# traces replayed at 2x (ten steps, four of warm-up) by deepum-sim of e1274c9 (HEAD_SIM), with
# sim-shape.patch (SHAPE_SIM) and with sim-op-dump.patch (DUMP_SIM, whose operation list
# op-order.py reads); then the seventeen measured points of the committed traces under HEAD_SIM
# and SHAPE_SIM ("point head shape", ms a step).
set -uo pipefail
here=bench/results/2026-11-29-h200-zoo-traces
dir=$(mktemp -d)
for t in resnet152 llama-1b; do
  xz -dc "$here/$t-2x.dtrace.xz" > "$dir/$t.dtrace"
  for build in "e1274c9|$1" "sim-shape.patch|$2"; do
    echo "== $t, ${build%%|*}"
    "${build#*|}" replay "$dir/$t.dtrace" --machine sim/machines/h100.json --iterations 10 --warmup 4 \
      --oversubscription 2 --policy deepum-swap 2>&1 | grep -E "^deepum-swap"
  done
done
"$3" replay "$dir/resnet152.dtrace" --machine sim/machines/h100.json --iterations 10 --warmup 4 \
  --oversubscription 2 --policy deepum-swap 2> "$dir/ops.txt" > /dev/null
echo "== resnet152: operations by shape against one step (2889) earlier, as the replay orders them"
python3 "$here/op-order.py" "$dir/ops.txt" 2889
echo "== the seventeen measured points: e1274c9, with sim-shape.patch"
bash bench/results/2026-11-29-h200-spare-room/sim-points.sh "$1" "$2"
rm -rf "$dir"
