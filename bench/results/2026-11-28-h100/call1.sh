#!/bin/bash
# Call 1: does the old CUPTI pattern hang tracer_stress's load; where a placement holds the program's thread.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep tracer_stress stress_kernels stress_kernels_rt" scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
ls /tmp/bt/tests/ | grep -i stress
{
for i in 1 2 3; do
  s=$(date +%s)
  timeout -k 5 100 $(find /tmp/bt -type f -name tracer_stress | head -1) /tmp/bt/tests/stress_kernels.fatbin --runtime-lib $(find /tmp/bt -name "libstress_kernels_rt.so" | head -1) --threads 18 --seconds 20 --watchdog 10 --old-callback-pattern 1 2>&1 | tail -3
  echo "old pattern run $i: exit ${PIPESTATUS[0]} after $(( $(date +%s)-s ))s"
done
for i in 1 2; do
  LD_PRELOAD=/tmp/bt/lib/libdeepum.so DEEPUM_ALLOC_LIMIT=1GiB DEEPUM_LOG_LEVEL=warn timeout -k 5 100 $(find /tmp/bt -type f -name tracer_stress | head -1) /tmp/bt/tests/stress_kernels.fatbin --runtime-lib $(find /tmp/bt -name "libstress_kernels_rt.so" | head -1) --threads 18 --seconds 5 --watchdog 20 2>&1 | tail -2
  echo "deepum run $i: exit ${PIPESTATUS[0]}"
done
} > $OUT/stress.txt 2>&1
cat $OUT/stress.txt | grep -E "exit|FAIL|PASS"
git apply .scratch/hold-split.patch && s=$(date +%s) && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bh -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildh.log 2>&1 || { tail -30 /tmp/buildh.log; exit 1; }
echo "build hold-split $(( $(date +%s)-s ))s"
git checkout cuda/src/stream_ordered_evictor.cpp
timeout 300 python3 tests/zoo/model_zoo.py --lib /tmp/bh/lib/libdeepum.so --sweep /tmp/bt/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only gpt2 cupy > $OUT/zoo.txt 2>&1
grep -r HOLDSPLIT $OUT/zoo > $OUT/holdsplit.txt
python3 bench/results/2026-11-26-one-x-h100/summarize.py $OUT/zoo > $OUT/where.txt 2>&1
cd $OUT && tar czf zoo-logs.tar.gz zoo/ && rm -rf zoo/
cut -c1-330 $OUT/where.txt; cat $OUT/holdsplit.txt | sed 's/.*HOLDSPLIT/HS/'; tail -8 $OUT/zoo.txt
