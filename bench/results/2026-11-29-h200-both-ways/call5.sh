#!/bin/bash
# Call 5: each swap's blocks dropped a chunk at a time while later chunks' copies run
# (chunked-drops.patch, the working tree) against 9d6c65f (two lanes): the zoo at 2x over ten
# steps, 9d6c65f [1] and the patch [2].
set -uo pipefail
d=bench/results/2026-11-29-h200-both-ways
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/chunked-drops.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 10 --only cuda-sweep cupy gpt2 resnet152 bert-large > $OUT/call5-zoo.txt 2>&1
echo "zoo at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*2x*.log; do echo "$(basename $f): $(grep -o 'time_ms [0-9.]*' $f | awk '{printf "%.1f ", $2}')"; done | tee $OUT/call5-steps.txt
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call5-thread.txt
tar czf $OUT/call5-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -15 $OUT/call5-zoo.txt
