#!/bin/bash
# The repeat check read from the operation's history (change.patch, 391ee5c) against 3800262 (the
# patch taken out), both with ../2026-12-01-h200-launch-phases/launch-probe.patch applied (a
# histogram per phase of the launch callback, printed at exit into each run's log), under the zoo
# at 1x on four shapes. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
git apply bench/results/2026-12-01-h200-launch-phases/launch-probe.patch || exit 1
bench/ab_builds.sh bench/results/2026-12-01-h200-repeat-check/change.patch || exit 1
echo "builds $(( $(date +%s)-s ))s"
timeout 420 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --modes "fastest 1x" --steps 5 --out $OUT/zoo --only t5-base llama-bf16-ckpt convnext bert-large > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.log; do echo "== $(basename $f)"; grep "^probe" $f; done > $OUT/call1-phases.txt
tar czf $OUT/call1-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^== |probe (scan|decide) " $OUT/call1-phases.txt | paste - - - | awk '{print $2, "scan p50", $6, "decide p50", $12, "n", $11}'
tail -12 $OUT/call1-zoo.txt
