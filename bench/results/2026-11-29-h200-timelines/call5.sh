#!/bin/bash
# Call 5: evictions started for the room the coming operations needed one period ago
# (room-ahead.patch, its default of four in flight), against 7ed95db: the zoo at 2x, GPT-2 124M,
# ResNet-152 and the CUDA sweep; 7ed95db [1], the working tree [2].
set -uo pipefail
d=bench/results/2026-11-29-h200-timelines
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/room-ahead.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only gpt2 resnet152 cuda-sweep > $OUT/call5-zoo.txt 2>&1
echo "zoo at $(( $(date +%s)-s ))s"
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call5-thread.txt
for f in $OUT/zoo/logs/*-2.stats.json; do echo "$f $(python3 -c "import json,sys; print(json.load(open('$f'))['engine']['moves'].get('room_ahead_evictions'))")"; done >> $OUT/call5-thread.txt
tar czf $OUT/call5-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
cat $OUT/call5-thread.txt
tail -9 $OUT/call5-zoo.txt
