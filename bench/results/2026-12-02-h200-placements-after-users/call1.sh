#!/bin/bash
# Call 1: the zoo at 2x, eight steps (the median of steps 1-7), native once and main (A, [1])
# against placements after their blocks' earlier users (B, [2]), turn about: GPT-2 124M,
# ResNet-152, BERT-large, DenseNet-201, T5-base. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-placements-after-users
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
$d/ab.sh || exit 1
s=$(date +%s)
timeout 470 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only gpt2 resnet152 bert-large densenet201 t5-base > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call1-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call1-zoo.txt | tail -16
