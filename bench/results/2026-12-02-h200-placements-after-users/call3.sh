#!/bin/bash
# Call 3: `ctest -L gpu` on B, four tests at a time, then the zoo at 2x, A ([1]) against B ([2]),
# eight steps: the 1B Llama-style decoder, BERT-base, ViT-B/16. From the repository root; results
# into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-placements-after-users
BN_TARGETS="" $d/ab.sh || exit 1
s=$(date +%s)
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure) > $OUT/call3-ctest-gpu.txt 2>&1
echo "ctest exit $? in $(( $(date +%s)-s ))s"; grep -E "tests passed|Failed|\*\*\*" $OUT/call3-ctest-gpu.txt | tail -8
s=$(date +%s)
timeout 330 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo \
  --only llama-1b bert-base vit-b16 > $OUT/call3-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call3-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call3-zoo.txt | tail -12
