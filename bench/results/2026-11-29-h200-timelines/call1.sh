#!/bin/bash
# Call 1: dependent_call_probe (each driver call deepum makes, on a stream that first waits for an
# event behind other work), then the zoo at 2x, GPT-2 124M and the CUDA sweep, under 7ed95db
# (async-drop.patch reversed, [1]) and the working tree ([2]: the eviction thread drops a swap's
# blocks behind its copies in stream order, no host wait).
set -uo pipefail
d=bench/results/2026-11-29-h200-timelines
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/async-drop.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep dependent_call_probe" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
timeout 60 /tmp/bn/bin/dependent_call_probe 64 > $OUT/call1-probe.txt 2>&1; echo "probe exit $?"
python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only gpt2 cuda-sweep > $OUT/call1-zoo.txt 2>&1
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call1-thread.txt
tar czf $OUT/call1-logs.tar.gz -C $OUT/zoo . && rm -rf $OUT/zoo
echo "all $(( $(date +%s)-s ))s"
cat $OUT/call1-probe.txt
cat $OUT/call1-thread.txt
tail -8 $OUT/call1-zoo.txt
