#!/bin/bash
# Call 2: every target of B, `ctest -L gpu` on it (run here one test at a time, it passed the 300 s
# limit in the eighteenth test; call 3 runs it four at a time), then T5-base at 2x again, A ([1]) against B
# ([2]), eight steps. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-placements-after-users
BN_TARGETS="" $d/ab.sh || exit 1
s=$(date +%s)
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 300 ctest -L gpu --output-on-failure) > $OUT/call2-ctest-gpu.txt 2>&1
echo "ctest exit $? in $(( $(date +%s)-s ))s"; grep -E "tests passed|Failed|\*\*\*" $OUT/call2-ctest-gpu.txt | tail -8
s=$(date +%s)
timeout 170 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 2x" --steps 8 --out $OUT/zoo --only t5-base > $OUT/call2-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call2-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call2-zoo.txt | tail -6
