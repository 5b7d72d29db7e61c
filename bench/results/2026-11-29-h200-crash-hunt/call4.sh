#!/bin/bash
# Call 4: T5-base, the change (the working tree) against 962753a (rearm.patch taken back out), at
# 2x, ten steps, both builds in the same call, within what device time was left. Run from the
# repository root; results into $OUT.
set -uo pipefail
s=$(date +%s)
here=bench/results/2026-11-29-h200-crash-hunt
# (A second run on the same machine reuses the builds: the first passed no --sweep, which the zoo
# requires.)
[[ -f /tmp/bb/lib/libdeepum.so && -f /tmp/bn/lib/libdeepum.so ]] || {
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/rearm.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
}
echo "builds $(( $(date +%s)-s ))s"
timeout $(( 230 - ($(date +%s) - s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /bin/true --out $OUT/zoo --modes "fastest 2x" --steps 10 --only t5-base > $OUT/call4-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call4-zoo.json 2>/dev/null
tar czf $OUT/call4-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^t5" $OUT/call4-zoo.txt | tail -3
