#!/bin/bash
# Call 7: call 6 again for GPT-2 124M alone, ten steps a run.
set -uo pipefail
d=bench/results/2026-11-29-h200-value-waits
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/value-waits.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only gpt2 --steps 10 > $OUT/call7-zoo.txt 2>&1
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call7-thread.txt
tar czf $OUT/call7-logs.tar.gz -C $OUT/zoo . && rm -rf $OUT/zoo
cat $OUT/call7-thread.txt
tail -8 $OUT/call7-zoo.txt
