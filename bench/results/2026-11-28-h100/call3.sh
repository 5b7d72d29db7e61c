#!/bin/bash
# Call 3: does making room further ahead (evictions_ahead) shorten the placements' wait for the room's swap?
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
git apply bench/results/2026-11-28-h100/hold-split.patch || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bh -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildh.log 2>&1 || { tail -30 /tmp/buildh.log; exit 1; }
git checkout cuda/src/stream_ordered_evictor.cpp
echo "build $(( $(date +%s)-s ))s"
for ahead in 1 4; do
  timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bh/lib/libdeepum.so --sweep /tmp/bh/tests/sweep --out $OUT/zoo-ahead$ahead --modes "fastest 2x" --only gpt2 resnet152 --set evictions_ahead=$ahead > $OUT/zoo-ahead$ahead.txt 2>&1
  python3 bench/results/2026-11-26-one-x-h100/summarize.py $OUT/zoo-ahead$ahead > $OUT/where-ahead$ahead.txt 2>&1
  grep -r HOLDSPLIT $OUT/zoo-ahead$ahead | sed "s#.*/logs/#ahead$ahead #" >> $OUT/holdsplit-ahead.txt
done
tar czf $OUT/zoo-logs-ahead.tar.gz -C $OUT zoo-ahead1 zoo-ahead4 && rm -rf $OUT/zoo-ahead1 $OUT/zoo-ahead4
for a in 1 4; do echo "== ahead $a"; cut -c1-250 $OUT/where-ahead$a.txt; tail -5 $OUT/zoo-ahead$a.txt; done
grep -E "record\+waits|copy_back|discard_and" $OUT/holdsplit-ahead.txt | grep -v " 0.0 ms"
