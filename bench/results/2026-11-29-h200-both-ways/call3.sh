#!/bin/bash
# Call 3: the swaps' copies out through two buffers on two streams (two-lanes.patch, the working
# tree) against HEAD (54b6e23): copy_blocks_check on the GPU, then the zoo at 2x (the CUDA sweep,
# the CuPy loop, GPT-2 124M, ResNet-152), HEAD [1] and the patch [2].
set -uo pipefail
d=bench/results/2026-11-29-h200-both-ways
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/two-lanes.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep copy_blocks_check" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
/tmp/bn/tests/copy_blocks_check 2>&1 | tail -3 | tee $OUT/call3-copy-blocks-check.txt
python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only cuda-sweep cupy gpt2 resnet152 > $OUT/call3-zoo.txt 2>&1
echo "zoo at $(( $(date +%s)-s ))s"
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call3-thread.txt
tar czf $OUT/call3-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -12 $OUT/call3-zoo.txt
