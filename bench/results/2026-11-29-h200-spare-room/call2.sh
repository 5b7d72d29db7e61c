#!/bin/bash
# Call 2: automatic evictions ahead, two in flight in a loop the copies back see whole
# (auto-ahead.patch, the working tree) against ae0b066 (the patch taken back out), the zoo at 2x,
# ten steps, both builds in the same call; then the GPU tests on the working tree. Run from the
# repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-spare-room
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/auto-ahead.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || { tail -30 /tmp/buildb.log; exit 1; }
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
timeout 300 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 10 --only cuda-sweep cupy gpt2-350m bert-large > $OUT/call2-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call2-zoo.json
(cd /tmp/bn && timeout 170 ctest -L gpu -j4 --output-on-failure > $OUT/call2-ctest-gpu.txt 2>&1)
echo "ctest exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/call2-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -3 $OUT/call2-ctest-gpu.txt
grep -E "^(cuda-sweep|cupy|gpt2|bert)" $OUT/call2-zoo.txt | tail -12
