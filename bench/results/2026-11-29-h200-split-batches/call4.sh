#!/bin/bash
# Call 4: the GPU tests on the working tree (loop.patch applied), then call 3's decoder A/B again
# with the time left. Run from the repository root; results into $OUT.
set -uo pipefail
s=$(date +%s)
here=bench/results/2026-11-29-h200-split-batches
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/loop.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildt.log 2>&1 || { tail -30 /tmp/buildt.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
(cd /tmp/bt && timeout 200 ctest -L gpu -j4 --output-on-failure > $OUT/call4-ctest-gpu.txt 2>&1)
echo "ctest exit $? at $(( $(date +%s)-s ))s"; tail -5 $OUT/call4-ctest-gpu.txt
left=$(( 520 - ($(date +%s) - s) ))
if (( left > 200 )); then
  timeout $left python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bt/lib/libdeepum.so /tmp/bt/lib/libdeepum.so /tmp/bb/lib/libdeepum.so \
    --sweep /tmp/bt/tests/sweep --out $OUT/decoder --modes "fastest 2x" --steps 10 --only llama-1b > $OUT/call4-decoder.txt 2>&1
  echo "zoo exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/decoder/zoo.json $OUT/call4-decoder.json 2>/dev/null
  tar czf $OUT/call4-logs.tar.gz -C $OUT decoder && rm -rf $OUT/decoder
  grep -E "^llama" $OUT/call4-decoder.txt | tail -5
fi
