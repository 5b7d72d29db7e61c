#!/bin/bash
# Call 6: the shapes not run since earlier commits, at 2x under a640410 (its library is
# fbd79aa's but for comments), eight steps: the CUDA sweep, the CuPy loop, T5-base and
# BERT-large. Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
timeout 230 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --steps 8 --only cuda-sweep cupy t5-base bert-large > $OUT/call6-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
mv $OUT/zoo/zoo.json $OUT/call6-zoo.json 2>/dev/null
tar czf $OUT/call6-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "^(cuda|cupy|t5|bert)" $OUT/call6-zoo.txt
