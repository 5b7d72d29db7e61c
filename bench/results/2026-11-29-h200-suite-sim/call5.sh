#!/bin/bash
# Call 5: ResNet-152 at 1x, eight steps, under cdddd71 (1.01x on 2026-11-28), e97b086, 7ed95db and
# fbd79aa in the same call: where its 1x time went. Each older tree is rebuilt from the working
# tree by a patch made beforehand outside this folder:
#   for c in cdddd71 e97b086 7ed95db; do git diff $c fbd79aa -- . ':!bench/results' ':!docs' > .bisect/$c.patch; done
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
libs=()
for c in cdddd71 e97b086 7ed95db; do
  rm -rf /tmp/t$c && cp -a . /tmp/t$c && (cd /tmp/t$c && patch -s -R -p1 < .bisect/$c.patch) || exit 1
  (DEEPUM_BUILD_TARGETS="deepum" /tmp/t$c/scripts/build.sh /tmp/b$c -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/build$c.log 2>&1 || tail -20 /tmp/build$c.log) &
  libs+=(/tmp/b$c/lib/libdeepum.so)
done
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -20 /tmp/buildn.log) &
wait
libs+=(/tmp/bn/lib/libdeepum.so)
echo "builds $(( $(date +%s)-s ))s"; ls -la "${libs[@]}" | awk '{print $5, $9}'
timeout 300 python3 tests/zoo/model_zoo.py --lib "${libs[@]}" --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 1x" --steps 8 --only resnet152 > $OUT/call5-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call5-zoo.json
tar czf $OUT/call5-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^resnet" $OUT/call5-zoo.txt
