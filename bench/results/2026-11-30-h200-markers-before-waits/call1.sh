#!/bin/bash
# A progress marker before every launch whose stream waits for a move (markers-before-waits.patch),
# on the GPU: the zoo at 2x with main's library ([1], the patch taken back out) and the change's
# ([2]) in the same call; the 1B decoder ten steps, then other shapes six. From the repository
# root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
bench/ab_builds.sh bench/results/2026-11-30-h200-markers-before-waits/markers-before-waits.patch || exit 1
echo "builds $(( $(date +%s)-s ))s"
zoo() { python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --modes "fastest 2x" "$@"; }
timeout $(( 590 - ($(date +%s)-s) )) bash -c "$(declare -f zoo); zoo --out $OUT/zoo-decoder --steps 10 --only llama-1b" > $OUT/zoo-decoder.txt 2>&1
echo "decoder exit $? at $(( $(date +%s)-s ))s"
timeout $(( 590 - ($(date +%s)-s) )) bash -c "$(declare -f zoo); zoo --out $OUT/zoo --steps 6 --only t5-base bert-large resnet152" > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/logs.tar.gz -C $OUT zoo-decoder zoo 2>/dev/null && rm -rf $OUT/zoo-decoder $OUT/zoo
tail -6 $OUT/zoo-decoder.txt; tail -12 $OUT/zoo.txt
