#!/bin/bash
# The GPU measurement this change needs (run as ../2026-11-30-h200-place-near/call1.sh).
# With place-near.patch applied to the working tree (git apply), from the repository root:
# `ctest -L gpu` on the change, then the zoo at 2x with main's library ([1], the patch taken back
# out) and the change's ([2]) in the same call on BERT-large, T5-base, GPT-2 124M and the 1B
# decoder, six steps. Results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
bench/ab_builds.sh bench/results/2026-11-30-sim-place-near/place-near.patch all || exit 1
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $?")
timeout $(( 590 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --steps 6 --only bert-large t5-base gpt2 llama-1b > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/zoo.json 2>/dev/null; tar czf $OUT/logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout" $OUT/ctest-gpu.txt | tail -4
tail -16 $OUT/zoo.txt
