#!/bin/bash
# Call 6: GPT-2 350M, T5-base and BERT-large through the zoo, natively and at 2x under A and B
# (five steps; floor and link rate from the same call). From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
BN_TARGETS="deepum sweep" $d/ab.sh || exit 1
s=$(date +%s)
timeout 480 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 5 --out $OUT/zoo --only gpt2-350m t5-base bert-large \
  > $OUT/call6-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call6-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call6-zoo.txt | tail -14
