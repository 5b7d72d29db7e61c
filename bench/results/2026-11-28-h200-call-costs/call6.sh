#!/bin/bash
# Call 6: call 5's two builds (still on the warm machine) on the 1B decoder at 2x.
s=$(date +%s); timeout 180 python3 tests/zoo/model_zoo.py --lib /tmp/bp/lib/libdeepum.so /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only llama-1b > $OUT/zoo.txt 2>&1; echo "zoo exit $? at $(( $(date +%s)-s ))s"; for f in $OUT/zoo/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']
print(sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9))" $f; done > $OUT/thread.txt 2>&1; tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo; cat $OUT/thread.txt; tail -4 $OUT/zoo.txt
