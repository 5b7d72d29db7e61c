#!/bin/bash
# Call 2: the engine planning with loops of shapes where the blocks repeat (engine.patch, the
# working tree) against the engine without it (engine.patch reversed), at 2x, each workload's
# native run shared by the two builds (the zoo's --lib A B, taking turns going first).
set -uo pipefail
d=bench/results/2026-11-28-h200-traces
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/engine.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || tail -30 /tmp/buildb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
timeout 480 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only llama-1b gpt2 resnet152 t5-base bert-large densenet201 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
tail -22 $OUT/zoo.txt
