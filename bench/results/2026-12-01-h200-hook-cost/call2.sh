#!/bin/bash
# change2.patch (the working tree: the first call's change less the sampled repeat check, and no
# histories while the live ranges fit under the limit) against main: `ctest -L gpu` on it, then the
# zoo with no resident limit (deepum's defaults) and at 1x on the two shapes whose steps are bound
# by launches. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
bench/ab_builds.sh bench/results/2026-12-01-h200-hook-cost/change2.patch all || exit 1
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 170 ctest -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $? at $(( $(date +%s)-s ))s")
left=$(( 540 - ($(date +%s)-s) ))
timeout $left python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --modes default "fastest 1x" --steps 5 --out $OUT/zoo --only t5-base llama-bf16-ckpt > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout" $OUT/ctest-gpu.txt | tail -4
tail -14 $OUT/zoo.txt
