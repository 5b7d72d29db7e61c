#!/bin/bash
# Call 1: the zoo at 2x, eight steps (the median of steps 1-7), native once and main (A, [1])
# against the eviction thread in the program's context (B, [2]), turn about: the CUDA sweep, the
# CuPy loop, ResNet-152, T5-base, GPT-2 124M. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-program-context
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
$d/ab.sh || exit 1
s=$(date +%s)
timeout 460 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only cuda-sweep cupy resnet152 t5-base gpt2 > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call1-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call1-zoo.txt | tail -16
