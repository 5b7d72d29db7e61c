#!/bin/bash
# Call 3: the zoo at 2x, A ([1]) against B ([2]), eight steps, on four workloads the placement
# change had not run: ResNet-50, ConvNeXt-Base, the bf16 checkpointed 1B decoder, and JAX. From the
# repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-drop-overlap
$d/ab.sh || exit 1
s=$(date +%s)
timeout 450 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only resnet50 convnext llama-bf16-ckpt jax > $OUT/call3-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call3-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call3-zoo.txt | tail -16
