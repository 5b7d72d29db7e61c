#!/bin/bash
# Call 1: where a placement's time on the program's thread goes. The working tree carries
# call-probe.patch (each driver call of a placement and a copy, timed by kind, printed at exit as
# "deepum-probe" lines); the sweep and GPT-2 124M at 2x with CUPTI tracing full, kernels and
# launches, and the 1B decoder with full tracing.
set -uo pipefail
d=bench/results/2026-11-28-h200-call-costs
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
zoo() {  # name, then the zoo's arguments
  local name=$1; shift
  timeout 200 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
    --out $OUT/$name --modes "fastest 2x" "$@" > $OUT/$name.txt 2>&1
  echo "$name exit $? at $(( $(date +%s)-s ))s"
  (cd $OUT/$name && tar xzf zoo-logs.tar.gz && for f in logs/*fastest*.log; do echo "== $name $f"; grep deepum-probe $f; done) >> $OUT/probe.txt
  for f in $OUT/$name/logs/*fastest*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']; l=p['launch_callback']
print(sys.argv[2], sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs p50 %.1fus p99 %.1fus' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9, l.get('p50_ns',0)/1e3, l.get('p99_ns',0)/1e3))" $f $name; done >> $OUT/thread.txt 2>&1
  tail -6 $OUT/$name.txt >> $OUT/tables.txt
}
zoo full --only cuda-sweep gpt2 llama-1b
zoo kernels --only cuda-sweep gpt2 --set tracing=kernels
zoo launches --only cuda-sweep gpt2 --set tracing=launches
tar czf $OUT/logs.tar.gz -C $OUT full kernels launches && rm -rf $OUT/full $OUT/kernels $OUT/launches
cat $OUT/thread.txt
grep -E "== |placement_total|ahead_total|pin_to_dev|dev_to_managed|discard_prefetch|wait_issued" $OUT/probe.txt | cut -c1-150
cat $OUT/tables.txt
