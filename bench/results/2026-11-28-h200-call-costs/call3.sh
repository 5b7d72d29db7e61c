#!/bin/bash
# Call 3: the GPU tests with the copy kernel (the working tree), then the kernel against the
# committed build (copy-kernel.patch reversed) on shapes call 2 lacked, at 2x: the CuPy loop and
# ResNet-152.
set -uo pipefail
d=bench/results/2026-11-28-h200-call-costs
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/copy-kernel.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 290 ctest -L gpu -j2 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only cupy resnet152 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']; l=p['launch_callback']
print(sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs p50 %.1fus p99 %.1fus' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9, l.get('p50_ns',0)/1e3, l.get('p99_ns',0)/1e3))" $f; done > $OUT/thread.txt 2>&1
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout|\*\*\*" $OUT/ctest-gpu.txt | tail -12
cat $OUT/thread.txt
tail -6 $OUT/zoo.txt
