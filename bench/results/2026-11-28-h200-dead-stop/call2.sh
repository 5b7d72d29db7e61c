#!/bin/bash
# Call 2: the same in the other order, with the CuPy loop and BERT-large.
set -uo pipefail
d=bench/results/2026-11-28-h200-dead-stop
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
rm -rf /tmp/stop && mkdir /tmp/stop && cp -a . /tmp/stop/ && (cd /tmp/stop && patch -s -p1 < $d/dead-stop.patch) || exit 1
(cd /tmp/stop && DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build.log 2>&1 || tail -30 /tmp/build.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || tail -30 /tmp/buildb.log) &
wait
echo "build $(( $(date +%s)-s ))s"
for lib in stop base; do
  b=/tmp/bt; [[ $lib == base ]] && b=/tmp/bb
  timeout 280 python3 tests/zoo/model_zoo.py --lib $b/lib/libdeepum.so --sweep $b/tests/sweep --out $OUT/zoo-$lib --modes "fastest 2x" --only gpt2 resnet152 cupy bert-large > $OUT/zoo-$lib.txt 2>&1
  echo "zoo $lib exit $? at $(( $(date +%s)-s ))s"
done
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo-base zoo-stop && rm -rf $OUT/zoo-base $OUT/zoo-stop
for lib in base stop; do echo "== $lib"; tail -9 $OUT/zoo-$lib.txt; done
