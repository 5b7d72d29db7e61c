#!/bin/bash
# Call 3: an ablation of the engine's moves at 2x on the working tree (tests/zoo/model_zoo.py modes):
# evict (evictions ordered before launches, the GPU faults data back in), safe (+ prefetches before
# launches, dead blocks dropped), lru (mode fast: + fresh blocks placed, live victims swapped to
# pinned memory; learn_loop off), fastest (+ the learned loop: victims by next use, copies back ahead).
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log
echo "build $(( $(date +%s)-s ))s"
timeout $(( 560 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "evict 2x" "safe 2x" "lru 2x" "fastest 2x" \
  --only cuda-sweep cupy gpt2 resnet152 > $OUT/call3-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call3-thread.txt 2>&1
tar czf $OUT/call3-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
cat $OUT/call3-thread.txt
tail -22 $OUT/call3-zoo.txt
