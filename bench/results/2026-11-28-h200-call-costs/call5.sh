#!/bin/bash
# Call 5: the eviction thread in the program's context, where its copies out of managed memory go
# through the copy kernel too (program-context.patch on the working tree, [1]), against the working
# tree (its own context, batched calls out, [2]), at 2x on the three shortest workloads.
set -uo pipefail
d=bench/results/2026-11-28-h200-call-costs
s=$(date +%s)
rm -rf /tmp/pc && mkdir /tmp/pc && cp -a . /tmp/pc/ && (cd /tmp/pc && patch -s -p1 < $d/program-context.patch) || exit 1
(cd /tmp/pc && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bp -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bp.log 2>&1 || tail -30 /tmp/bp.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
timeout 230 python3 tests/zoo/model_zoo.py --lib /tmp/bp/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only cuda-sweep cupy gpt2 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']; l=p['launch_callback']
print(sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs p50 %.1fus p99 %.1fus' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9, l.get('p50_ns',0)/1e3, l.get('p99_ns',0)/1e3))" $f; done > $OUT/thread.txt 2>&1
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
cat $OUT/thread.txt
tail -8 $OUT/zoo.txt
