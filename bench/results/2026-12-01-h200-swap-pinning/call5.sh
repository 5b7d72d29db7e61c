#!/bin/bash
# Call 5: shapes the direct runs lack, natively and at 2x under A and B (the zoo, five steps,
# floor and link rate from the same call): a deep CNN, a CuPy loop, a plain CUDA sweep. From the
# repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
BN_TARGETS="deepum sweep" $d/ab.sh || exit 1
s=$(date +%s)
timeout 420 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 5 --out $OUT/zoo --only resnet152 cupy cuda-sweep \
  > $OUT/call5-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call5-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call5-zoo.txt | tail -14
