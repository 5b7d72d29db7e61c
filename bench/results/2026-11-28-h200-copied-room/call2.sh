#!/bin/bash
# Call 2: the GPU tests on cdddd71 (the block histories kept in rings, landed without a GPU run),
# and the program thread's time per launch with no resident limit (default), at 1x and at 2x.
set -uo pipefail
s=$(date +%s)
scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 300 ctest -L gpu -j2 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"
timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes default "fastest 1x" "fastest 2x" --only gpt2 resnet152 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; l=p['launch_callback']
print(sys.argv[1].split('/')[-1], 'launch p50 %.1fus p99 %.1fus max %.1fus' % (l.get('p50_ns',0)/1e3, l.get('p99_ns',0)/1e3, l.get('max_ns',0)/1e3))" $f; done > $OUT/thread.txt 2>&1
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout" $OUT/ctest-gpu.txt | tail -8
cat $OUT/thread.txt
tail -7 $OUT/zoo.txt
