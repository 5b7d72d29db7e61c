#!/bin/bash
# Call 6: the working tree against 6338e39 (value-waits.patch reversed) in the same call, GPT-2
# 124M and the CuPy loop at 2x (mode fast), the zoo taking turns between them.
set -uo pipefail
d=bench/results/2026-11-29-h200-value-waits
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/value-waits.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only gpt2 cupy > $OUT/call6-zoo.txt 2>&1
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call6-thread.txt
tar czf $OUT/call6-logs.tar.gz -C $OUT/zoo . && rm -rf $OUT/zoo
cat $OUT/call6-thread.txt
tail -8 $OUT/call6-zoo.txt
