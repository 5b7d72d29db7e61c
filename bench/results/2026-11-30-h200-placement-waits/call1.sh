#!/bin/bash
# Call 1: placements that follow only the moves that took their blocks out, where those followed
# every user (placement.patch, the working tree), against c15d02d (the patch taken back out): the
# working tree's `ctest -L gpu`, then the zoo at 2x with both builds in the same call on BERT-large,
# GPT-2 350M, T5-base and GPT-2 124M, six steps. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-placement-waits
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/placement.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure > $OUT/call1-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
timeout $(( 585 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --steps 6 --only bert-large gpt2-350m t5-base gpt2 > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call1-zoo.json 2>/dev/null; tar czf $OUT/call1-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/call1-ctest-gpu.txt | tail -12
grep -E "^(pinned|bert|gpt2|t5)" $OUT/call1-zoo.txt | tail -13
