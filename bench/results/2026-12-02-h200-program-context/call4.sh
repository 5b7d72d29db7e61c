#!/bin/bash
# Call 4: main alone (A, built by call 1 on the same machine) at 1x and 3x, eight steps, native
# once: T5-base, ResNet-152, GPT-2 124M, the CuPy loop, the CUDA sweep. From the repository root;
# results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-program-context
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
$d/ab.sh || exit 1
s=$(date +%s)
timeout 500 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 1x" "fastest 3x" --steps 8 --out $OUT/zoo \
  --only cuda-sweep cupy t5-base gpt2 resnet152 > $OUT/call4-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call4-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call4-zoo.txt | tail -20
