#!/bin/bash
# Call 1: traces of ResNet-152 and the 1B decoder recorded as the zoo measures them (fastest
# settings, 2x, ten steps, e1274c9), for the simulator; the traces recorded on 2026-11-26 and
# 2026-11-28 ran without a resident limit, for five steps. Run from the repository root; the
# traces, xz-compressed, and the zoo's output into $OUT.
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
mkdir -p /tmp/traces
for w in resnet152 llama-1b; do
  timeout $(( 250 - ($(date +%s) - s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$w --modes "fastest 2x" --steps 10 --only $w --set trace_file=/tmp/traces/$w > $OUT/call1-$w.txt 2>&1
  echo "zoo $w exit $? at $(( $(date +%s)-s ))s"
  [[ -f /tmp/traces/$w.dtrace ]] && xz -T0 -3 -c /tmp/traces/$w.dtrace > $OUT/$w-2x.dtrace.xz
done
ls -la $OUT
tar czf $OUT/call1-logs.tar.gz -C $OUT resnet152 llama-1b 2>/dev/null && rm -rf $OUT/resnet152 $OUT/llama-1b
grep -hE "^(resnet|llama)" $OUT/call1-*.txt | tail -4
