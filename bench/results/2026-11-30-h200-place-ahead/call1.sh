#!/bin/bash
# Call 1: branch place-ahead (dead and fresh blocks the learned loop names next placed ahead on the
# restore stream; the working tree) against main (place-ahead.patch taken back out): `ctest -L gpu`
# on the branch, then the zoo at 2x with both builds in the same call on T5-base, BERT-large,
# GPT-2 124M and the 1B decoder, six steps. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-place-ahead
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/place-ahead.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure > $OUT/call1-ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
timeout $(( 590 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --steps 6 --only t5-base gpt2 bert-large llama-1b > $OUT/call1-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call1-zoo.json 2>/dev/null; tar czf $OUT/call1-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/call1-ctest-gpu.txt | tail -12
tail -16 $OUT/call1-zoo.txt
