#!/bin/bash
# 1x and 2x of the zoo's workloads at HEAD, with where the time goes.
# Run on the GPU machine from the repository root: MODES='"fastest 1x" "fastest 2x"' WORK="gpt2 cupy" bash bench/results/2026-11-26-one-x-h100/onex.sh
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
eval "timeout 480 python3 tests/zoo/model_zoo.py --lib /tmp/bt/lib/libdeepum.so --sweep /tmp/bt/tests/sweep --out $OUT/zoo --modes $MODES --only $WORK" > $OUT/zoo.txt 2>&1
python3 bench/results/2026-11-26-one-x-h100/summarize.py $OUT/zoo > $OUT/where.txt 2>&1
cd $OUT && tar czf zoo-logs.tar.gz zoo/ && rm -rf zoo/
cut -c1-330 $OUT/where.txt; tail -12 $OUT/zoo.txt
