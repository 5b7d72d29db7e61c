#!/bin/bash
# Call 1: where the program's thread is held in placements (the new eviction_thread_waits_ns), and
# whether evictions further ahead or smaller batches shorten it: one build, three settings.
set -uo pipefail
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log
echo "build $(( $(date +%s)-s ))s"
zoo() { local name=$1; shift
  timeout 170 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$name --modes "fastest 2x" --only gpt2 llama-1b cuda-sweep "$@" > $OUT/$name.txt 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s"; }
zoo default
zoo ahead2 --set evictions_ahead=2
zoo ahead4-256M --set evictions_ahead=4 --set eviction_headroom=256MiB
for n in default ahead2 ahead4-256M; do
  echo "== $n"; grep -E "fastest|native" $OUT/$n.txt | tail -8
  for f in $OUT/$n/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']
print(sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs launch p50 %.1fus' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9, p['launch_callback'].get('p50_ns',0)/1e3))" $f; done
done
tar czf $OUT/logs.tar.gz -C $OUT default ahead2 ahead4-256M && rm -rf $OUT/default $OUT/ahead2 $OUT/ahead4-256M
