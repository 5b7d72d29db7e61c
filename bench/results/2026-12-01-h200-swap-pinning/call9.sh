#!/bin/bash
# Call 9: the store pinning in 256 MiB chunks while it is that far behind, and each worker round
# pinning for 50 ms rather than four chunks (change2.patch), against 8d71275 (A): GPT-2 350M and
# BERT-large at 2x directly, then `ctest -L gpu` on it. From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
PATCH=change2.patch BN_TARGETS="" $d/ab.sh || exit 1
{ $d/direct2x.sh /tmp/bb/lib/libdeepum.so A gpt2-350m
  $d/direct2x.sh /tmp/bn/lib/libdeepum.so B gpt2-350m
  $d/direct2x.sh /tmp/bn/lib/libdeepum.so B bert-large
  $d/direct2x.sh /tmp/bb/lib/libdeepum.so A bert-large; } 2>&1 | tee $OUT/call9-direct.txt
cd $OUT && tar czf call9-logs.tar.gz A-* B-* && rm -f A-* B-* && cd - > /dev/null
s=$(date +%s)
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure) > $OUT/call9-ctest-gpu.txt 2>&1
echo "ctest exit $? in $(( $(date +%s)-s ))s"; tail -6 $OUT/call9-ctest-gpu.txt
