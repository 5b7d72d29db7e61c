#!/bin/bash
# Call 3: gpu_pytorch_lifecycle failed once in call 1 (its thread churn summed to nan under the
# working tree). Its program six times under each build (the working tree, fce2d17) against one
# native run; then the two builds at 2x on GPT-2 124M, ResNet-152 and DenseNet-201.
set -uo pipefail
d=bench/results/2026-11-28-h200-plan-ahead
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/swaps-in-program-context.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
py=$(command -v python3)
$py tests/programs/lifecycle_check.py 2>&1 | grep '^result' > $OUT/native.results
for i in 1 2 3 4 5 6; do
  for lib in bn bb; do
    DEEPUM_ALLOC_LIMIT=4GiB DEEPUM_RESIDENT_LIMIT=96MiB DEEPUM_MODE=fast LD_PRELOAD=/tmp/$lib/lib/libdeepum.so \
      timeout 90 $py tests/programs/lifecycle_check.py > $OUT/life-$lib-$i.log 2>&1
    if diff <(grep '^result' $OUT/life-$lib-$i.log) $OUT/native.results > /dev/null; then r=same; else r=DIFFERENT; fi
    echo "lifecycle $lib run $i: $r"
  done
done | tee $OUT/call3-lifecycle.txt
echo "lifecycle done at $(( $(date +%s)-s ))s"
timeout $(( 570 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only gpt2 resnet152 densenet201 > $OUT/call3-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call3-thread.txt 2>&1
mv $OUT/life-* $OUT/native.results $OUT/zoo/ 2>/dev/null
tar czf $OUT/call3-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
cat $OUT/call3-thread.txt
tail -8 $OUT/call3-zoo.txt
