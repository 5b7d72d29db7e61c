#!/bin/bash
# The traced run of call 2 (the bf16, checkpointed decoder at 2x on main): phases with
# bench/phase_breakdown.py, the slow backward of row 4 in 50 ms buckets and the fast one of row 3
# in 20. Needs a build's `deepum` (B=build dir). From this folder.
set -euo pipefail
B=${B:-../../../build}
t=$(mktemp -d)
xz -dc bf16ckpt.dtrace.xz > $t/bf16ckpt.dtrace
$B/bin/deepum trace convert $t/bf16ckpt.dtrace $t/bf16ckpt.json >/dev/null
python3 ../../phase_breakdown.py $t/bf16ckpt.json > phases.txt
python3 ../../phase_breakdown.py $t/bf16ckpt.json --timeline 4 backward --bucket-ms 50 > backward-timeline.txt
# A fast step's backward (row 3) in 20 ms buckets, and its launches summed.
python3 ../../phase_breakdown.py $t/bf16ckpt.json --timeline 3 backward --bucket-ms 20 > fast-backward-timeline.txt
awk 'NR>2{l+=$6} END{print "launches in row 3 backward:", l}' fast-backward-timeline.txt >> fast-backward-timeline.txt
rm -rf $t
