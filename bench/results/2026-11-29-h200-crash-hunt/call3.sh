#!/bin/bash
# Call 3: the GPU tests on the working tree (rearm.patch applied), then call 2's A/B again for the
# loops and the 1B decoder. Run from the repository root; results into $OUT.
set -uo pipefail
s=$(date +%s)
here=bench/results/2026-11-29-h200-crash-hunt
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/rearm.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildt.log 2>&1 || { tail -30 /tmp/buildt.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bt && timeout 200 ctest -L gpu -j4 --output-on-failure > $OUT/call3-ctest-gpu.txt 2>&1)
echo "ctest exit $? at $(( $(date +%s)-s ))s"; tail -5 $OUT/call3-ctest-gpu.txt
timeout $(( 570 - ($(date +%s) - s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bt/lib/libdeepum.so --sweep /tmp/bt/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 10 --only cuda-sweep cupy llama-1b > $OUT/call3-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call3-zoo.json 2>/dev/null
tar czf $OUT/call3-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^(llama|cuda-sweep|cupy)" $OUT/call3-zoo.txt | tail -9
