#!/bin/bash
# The traced run of call 2 (the bf16, checkpointed decoder at 2x on main): phases with
# bench/phase_breakdown.py and the slow backward of row 4 in 50 ms buckets. Needs a build's
# `deepum` (B=build dir). From this folder.
set -euo pipefail
B=${B:-../../../build}
t=$(mktemp -d)
xz -dc bf16ckpt.dtrace.xz > $t/bf16ckpt.dtrace
$B/bin/deepum trace convert $t/bf16ckpt.dtrace $t/bf16ckpt.json >/dev/null
python3 ../../phase_breakdown.py $t/bf16ckpt.json > phases.txt
python3 ../../phase_breakdown.py $t/bf16ckpt.json --timeline 4 backward --bucket-ms 50 > backward-timeline.txt
rm -rf $t
