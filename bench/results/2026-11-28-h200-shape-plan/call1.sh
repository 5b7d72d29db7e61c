#!/bin/bash
# Call 1: planning on loops of shapes (shape-plan.patch) against the engine without it, at 2x, in one
# call: GPT-2, ResNet-152, BERT-large and the 1B Llama-style decoder, the runs planning on shape
# loops made slower on 2026-11-26 (then over a whole period ahead, and on runs of layers).
set -uo pipefail
d=bench/results/2026-11-28-h200-shape-plan
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
rm -rf /tmp/plan && mkdir /tmp/plan && cp -a . /tmp/plan/ && (cd /tmp/plan && patch -s -p1 < $d/shape-plan.patch) || exit 1
(cd /tmp/plan && DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bp -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildp.log 2>&1 || tail -30 /tmp/buildp.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || tail -30 /tmp/buildb.log) &
wait
echo "build $(( $(date +%s)-s ))s"
for lib in plan base; do
  b=/tmp/bp; [[ $lib == base ]] && b=/tmp/bb
  timeout 270 python3 tests/zoo/model_zoo.py --lib $b/lib/libdeepum.so --sweep $b/tests/sweep --out $OUT/zoo-$lib --modes "fastest 2x" --only gpt2 resnet152 bert-large llama-1b > $OUT/zoo-$lib.txt 2>&1
  echo "zoo $lib exit $? at $(( $(date +%s)-s ))s"
done
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo-plan zoo-base && rm -rf $OUT/zoo-plan $OUT/zoo-base
for lib in base plan; do echo "== $lib"; tail -9 $OUT/zoo-$lib.txt; done
