#!/bin/bash
# Call 2: the zoo at 2x, eight steps (the median of steps 1-7), native once and main (A, [1])
# against the eviction thread in the program's context (B, [2]), turn about: the 1B
# Llama-style decoder, BERT-large, GPT-2 350M. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-program-context
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
$d/ab.sh || exit 1
s=$(date +%s)
timeout 520 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only llama-1b bert-large gpt2-350m > $OUT/call2-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call2-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call2-zoo.txt | tail -16
