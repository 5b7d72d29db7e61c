#!/bin/bash
# At 2x: launch-time moves on the program's thread (learn_loop off, eviction thread off), + the
# eviction thread (learn_loop off), + the learned loop (the default); and 3x, all in one call.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
Z="python3 tests/zoo/model_zoo.py --lib /tmp/bt/lib/libdeepum.so --sweep /tmp/bt/tests/sweep"
timeout 300 $Z --out $OUT/full --modes "fastest 2x" "lru 2x" "fastest 3x" --only cuda-sweep cupy gpt2 resnet152 > $OUT/full.txt 2>&1
echo "full $(( $(date +%s)-s ))s"
timeout 150 $Z --out $OUT/program-thread --modes "lru 2x" --set stream_ordered_eviction_thread=false --only cuda-sweep cupy gpt2 > $OUT/program-thread.txt 2>&1
echo "program-thread $(( $(date +%s)-s ))s"
python3 bench/results/2026-11-26-one-x-h100/summarize.py $OUT/full $OUT/program-thread > $OUT/where.txt 2>&1
cd $OUT && tar czf zoo-logs.tar.gz full program-thread && rm -rf full program-thread
cut -c1-250 where.txt; grep -hE "fastest|lru|native|pinned" full.txt program-thread.txt
