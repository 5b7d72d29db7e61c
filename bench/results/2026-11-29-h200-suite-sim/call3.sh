#!/bin/bash
# Call 3: fbd79aa (swaps of blocks other streams named) at 1x, 2x and 3x for ResNet-50 and at 1x
# and 3x for ResNet-152, ten steps. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout 250 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 1x" "fastest 2x" "fastest 3x" --steps 10 --only resnet50 > $OUT/call3-zoo-resnet50.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo152 --modes "fastest 1x" "fastest 3x" --steps 10 --only resnet152 > $OUT/call3-zoo-resnet152.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call3-zoo-resnet50.json; mv $OUT/zoo152/zoo.json $OUT/call3-zoo-resnet152.json
tar czf $OUT/call3-logs.tar.gz -C $OUT zoo zoo152 && rm -rf $OUT/zoo $OUT/zoo152
grep -E "^resnet" $OUT/call3-zoo-resnet50.txt $OUT/call3-zoo-resnet152.txt | tail -8
