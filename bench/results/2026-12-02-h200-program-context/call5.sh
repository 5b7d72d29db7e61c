#!/bin/bash
# Call 5: at 1x, main (999900d, [2]) against main before the swap store's pinning changes
# (7de42c1: pinning.patch taken back out, [1]), eight steps, native once, turn about: ResNet-152
# and T5-base, which ran 1.99x and 1.52x native at 1x on main in call 4. From the repository root
# (the working tree at 999900d); results into $OUT.
set -uo pipefail
d=bench/results/2026-12-02-h200-program-context
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $d/pinning.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_WARNINGS_AS_ERRORS=OFF -DDEEPUM_BUILD_TESTS=ON > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait
[[ -f /tmp/bb/lib/libdeepum.so ]] || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
s=$(date +%s)
timeout 330 python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --modes "fastest 1x" --steps 8 --out $OUT/zoo \
  --only resnet152 t5-base > $OUT/call5-zoo.txt 2>&1
echo "zoo exit $? in $(( $(date +%s)-s ))s"
tar czf $OUT/call5-zoo.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -v "^\[" $OUT/call5-zoo.txt | tail -10
