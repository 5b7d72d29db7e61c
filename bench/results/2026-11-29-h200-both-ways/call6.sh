#!/bin/bash
# Call 6: evictions for the room the coming operations need, looking a step's eighth ahead (at
# least 512 operations; room-ahead-512.patch: the 2026-11-29 room-ahead.patch with a longer
# horizon) against 9d6c65f: the zoo at 2x over eight steps for the shapes whose forward pass
# waits for room (GPT-2 124M, BERT-large, ResNet-152), 9d6c65f [1] and the patch [2].
set -uo pipefail
d=bench/results/2026-11-29-h200-both-ways
s=$(date +%s)
rm -rf /tmp/var && mkdir /tmp/var && cp -a . /tmp/var/ && (cd /tmp/var && patch -s -p1 < $d/room-ahead-512.patch) || exit 1
(cd /tmp/var && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bv -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bv.log 2>&1 || tail -30 /tmp/bv.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bv/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 8 --only gpt2 bert-large resnet152 > $OUT/call6-zoo.txt 2>&1
echo "zoo at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*2x*.log; do echo "$(basename $f): $(grep -o 'time_ms [0-9.]*' $f | awk '{printf "%.1f ", $2}')"; done | tee $OUT/call6-steps.txt
for f in $OUT/zoo/logs/*-2.stats.json; do echo "$(basename $f) room_ahead_evictions $(python3 -c "import json; print(json.load(open('$f'))['engine']['moves'].get('room_ahead_evictions'))")"; done | tee -a $OUT/call6-steps.txt
tar czf $OUT/call6-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -9 $OUT/call6-zoo.txt
