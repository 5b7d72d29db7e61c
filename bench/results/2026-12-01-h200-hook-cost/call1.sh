#!/bin/bash
# The launch hook's cost: change.patch (the working tree) against main, both with
# ../2026-12-01-h200-launch-phases/launch-probe.patch applied (a histogram per phase of the launch
# callback, printed at exit into each run's log), under the zoo at 1x and 2x on four shapes.
# From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
git apply bench/results/2026-12-01-h200-launch-phases/launch-probe.patch || exit 1
bench/ab_builds.sh bench/results/2026-12-01-h200-hook-cost/change.patch || exit 1
echo "builds $(( $(date +%s)-s ))s"
timeout 500 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --modes "fastest 1x" "fastest 2x" --steps 5 --out $OUT/zoo --only llama-bf16-ckpt t5-base bert-large convnext > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.log; do echo "== $(basename $f)"; grep "^probe" $f; done > $OUT/phases.txt
tar czf $OUT/zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^== |probe (scan|decide) " $OUT/phases.txt | paste - - - | awk '{print $2, $5, $6, $11, $12}'
tail -20 $OUT/zoo.txt
