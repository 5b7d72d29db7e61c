#!/bin/bash
# Where a launch's time in deepum goes: the working tree with launch-probe.patch (a histogram per
# phase of the launch callback, printed at exit into each run's log) under the zoo, at 1x and 2x,
# on four shapes. From the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout 540 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --modes "fastest 1x" "fastest 2x" --steps 5 --out $OUT/zoo --only bert-large llama-bf16-ckpt convnext t5-base > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/*.log; do echo "== $(basename $f)"; grep "^probe" $f; done > $OUT/phases.txt
tar czf $OUT/zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
cat $OUT/phases.txt | head -80
tail -12 $OUT/zoo.txt
