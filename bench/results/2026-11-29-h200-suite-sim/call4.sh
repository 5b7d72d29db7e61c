#!/bin/bash
# Call 4: 770cc1f against fbd79aa (other-streams.patch taken back out, and as committed) where call
# 3 left a doubt: ResNet-50 at 3x and ResNet-152 at 1x, ten steps, both builds in the same call.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-suite-sim
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/other-streams.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || { tail -30 /tmp/buildb.log; exit 1; }
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME MODE WORKLOAD
  timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$1 --modes "$2" --steps 10 --only $3 > $OUT/call4-$1.txt 2>&1
  echo "zoo $1 exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$1/zoo.json $OUT/call4-$1.json
}
zoo resnet50-3x "fastest 3x" resnet50
zoo resnet152-1x "fastest 1x" resnet152
tar czf $OUT/call4-logs.tar.gz -C $OUT resnet50-3x resnet152-1x && rm -rf $OUT/resnet50-3x $OUT/resnet152-1x
grep -hE "^resnet" $OUT/call4-*.txt | sort -u
