#!/bin/bash
# Call 4: copies back ahead only into room of evictions already issued (issued-room.patch), against
# 7ed95db: the zoo at 2x, the CUDA sweep, the CuPy loop and GPT-2 124M, 7ed95db [1] and the working
# tree [2] with the default settings; then the working tree alone with evictions_ahead=3.
set -uo pipefail
d=bench/results/2026-11-29-h200-timelines
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/issued-room.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only cuda-sweep cupy gpt2 > $OUT/call4-zoo.txt 2>&1
echo "zoo 1 at $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --set evictions_ahead=3 \
  --out $OUT/zoo3 --modes "fastest 2x" --only cuda-sweep cupy gpt2 > $OUT/call4-zoo-ahead3.txt 2>&1
echo "zoo 2 at $(( $(date +%s)-s ))s"
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json $OUT/zoo3/logs/*.stats.json > $OUT/call4-thread.txt
tar czf $OUT/call4-logs.tar.gz -C $OUT zoo zoo3 && rm -rf $OUT/zoo $OUT/zoo3
cat $OUT/call4-thread.txt
tail -9 $OUT/call4-zoo.txt
tail -6 $OUT/call4-zoo-ahead3.txt
