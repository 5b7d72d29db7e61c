#!/bin/bash
# Call 2: the 1B Llama-style decoder alone at 2x, without planning on shape loops first this time.
set -uo pipefail
d=bench/results/2026-11-28-h200-shape-plan
s=$(date +%s)
if [[ ! -f /tmp/bp/lib/libdeepum.so || ! -f /tmp/bb/lib/libdeepum.so ]]; then
  rm -rf /tmp/plan && mkdir /tmp/plan && cp -a . /tmp/plan/ && (cd /tmp/plan && patch -s -p1 < $d/shape-plan.patch) || exit 1
  (cd /tmp/plan && DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bp -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildp.log 2>&1) &
  (DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1) &
  wait
fi
echo "build $(( $(date +%s)-s ))s"
for lib in base plan; do
  b=/tmp/bp; [[ $lib == base ]] && b=/tmp/bb
  timeout 120 python3 tests/zoo/model_zoo.py --lib $b/lib/libdeepum.so --sweep $b/tests/sweep --out $OUT/zoo-$lib --modes "fastest 2x" --only llama-1b > $OUT/zoo-$lib.txt 2>&1
  echo "zoo $lib exit $? at $(( $(date +%s)-s ))s"
done
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo-plan zoo-base 2>/dev/null; rm -rf $OUT/zoo-plan $OUT/zoo-base
for lib in base plan; do echo "== $lib"; tail -3 $OUT/zoo-$lib.txt; done
