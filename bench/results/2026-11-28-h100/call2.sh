#!/bin/bash
# Call 2: which part of the old CUPTI pattern hangs; GPU waits for unissued evictions vs HEAD at 2x.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep tracer_stress stress_kernels stress_kernels_rt" scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
mkdir -p /tmp/base-src && git archive HEAD | tar -x -C /tmp/base-src && ln -sfn $PWD/.deps /tmp/base-src/.deps
(cd /tmp/base-src && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1) || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
ts=$(find /tmp/bt -type f -name tracer_stress | head -1); rt=$(find /tmp/bt -name libstress_kernels_rt.so | head -1)
{
for part in 2 3; do for i in 1 2; do
  s=$(date +%s)
  timeout -k 5 60 $ts /tmp/bt/tests/stress_kernels.fatbin --runtime-lib $rt --threads 18 --seconds 15 --watchdog 10 --old-callback-pattern $part 2>&1 | tail -2
  echo "old pattern part $part run $i: exit ${PIPESTATUS[0]} after $(( $(date +%s)-s ))s"
done; done
} > $OUT/stress-parts.txt 2>&1
grep -E "exit" $OUT/stress-parts.txt
for lib in bb bt; do
  timeout 270 python3 tests/zoo/model_zoo.py --lib /tmp/$lib/lib/libdeepum.so --sweep /tmp/bt/tests/sweep --out $OUT/zoo-$lib --modes "fastest 2x" --only gpt2 cupy cuda-sweep resnet152 > $OUT/zoo-$lib.txt 2>&1
  python3 bench/results/2026-11-26-one-x-h100/summarize.py $OUT/zoo-$lib > $OUT/where-$lib.txt 2>&1
done
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo-bb zoo-bt && rm -rf $OUT/zoo-bb $OUT/zoo-bt
for lib in bb bt; do echo "== $lib"; cut -c1-250 $OUT/where-$lib.txt; done
for lib in bb bt; do echo "== $lib"; tail -9 $OUT/zoo-$lib.txt; done
