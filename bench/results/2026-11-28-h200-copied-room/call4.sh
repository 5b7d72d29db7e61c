#!/bin/bash
# Call 4: swap_call_probe's copy back beside a thread that copies out and drops in a context of its
# own (as deepum's eviction thread), and call 1's A/B again on the workloads it moved most
# (copied-room.patch applied to a copy of the tree, against the tree as committed).
set -uo pipefail
d=bench/results/2026-11-28-h200-copied-room
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
rm -rf /tmp/new && mkdir /tmp/new && cp -a . /tmp/new/ && (cd /tmp/new && patch -s -p1 < $d/copied-room.patch) || exit 1
(cd /tmp/new && DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log) &
(DEEPUM_BUILD_TARGETS="deepum sweep swap_call_probe" scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_BUILD_BENCH=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || tail -30 /tmp/buildb.log) &
wait
echo "build $(( $(date +%s)-s ))s"
p=$(find /tmp/bb -name swap_call_probe -type f -perm -u+x | head -1)
timeout 90 $p > $OUT/swap-call-probe.txt 2>&1; echo "probe exit $? at $(( $(date +%s)-s ))s"
timeout 250 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only cupy llama-1b gpt2 > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']; l=p['launch_callback']
print(sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs launch p50 %.1fus p99 %.1fus' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9, l.get('p50_ns',0)/1e3, l.get('p99_ns',0)/1e3))" $f; done > $OUT/thread.txt 2>&1
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "place_staged|thread beside" $OUT/swap-call-probe.txt
cat $OUT/thread.txt
tail -10 $OUT/zoo.txt
