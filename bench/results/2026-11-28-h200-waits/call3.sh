#!/bin/bash
# Call 3: the placement's hold call by call (probe-timers.patch applied to the tree: the driver's
# placement calls, the copies back, the waits in deepum's own streams, and the eviction thread's
# waits and drops), GPT-2 124M and the 1B decoder at 2x.
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log
echo "build $(( $(date +%s)-s ))s"
timeout 240 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only gpt2 llama-1b > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*fastest*.log; do echo "== $f"; grep -E "PROBE|program thread|verdict" $f; done
tar czf $OUT/logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "fastest|native" $OUT/zoo.txt | tail -4
