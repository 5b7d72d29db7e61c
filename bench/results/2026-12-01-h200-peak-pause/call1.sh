#!/bin/bash
# A pause after an eviction ahead of a peak that found no victims (peak-pause.patch, the working
# tree) against main without it: the zoo at 2x, the 1B decoder in bf16 autocast with activation
# checkpointing ten steps, then `ctest -L gpu` on the working tree, then T5-base and BERT-large six
# steps. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
bench/ab_builds.sh bench/results/2026-12-01-h200-peak-pause/peak-pause.patch all || exit 1
echo "builds $(( $(date +%s)-s ))s"
zoo() { python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --modes "fastest 2x" "$@"; }
timeout 250 bash -c "$(declare -f zoo); zoo --out $OUT/zoo-ckpt --steps 10 --only llama-bf16-ckpt" > $OUT/zoo-ckpt.txt 2>&1
echo "ckpt exit $? at $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 170 ctest -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $? at $(( $(date +%s)-s ))s")
left=$(( 590 - ($(date +%s)-s) ))
[ $left -gt 60 ] && timeout $left bash -c "$(declare -f zoo); zoo --out $OUT/zoo --steps 6 --only t5-base bert-large" > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/logs.tar.gz -C $OUT zoo-ckpt zoo 2>/dev/null; rm -rf $OUT/zoo-ckpt $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout" $OUT/ctest-gpu.txt | tail -4
tail -6 $OUT/zoo-ckpt.txt; tail -9 $OUT/zoo.txt
