#!/bin/bash
# Call 2: placements issued behind a short copy of deepum's when their stream is idle
# (busy-stream.patch, the working tree) against 3264842 (the patch taken back out): the zoo at 2x,
# both builds in the same call, the 1B decoder, GPT-2 350M and BERT-large, ten steps each.
# Run from the repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-30-h200-step-phases
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/busy-stream.patch) || exit 1
DEEPUM_BUILD_TARGETS="deepum sweep" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s"
zoo() {  # NAME STEPS SECONDS WORKLOADS...
  local name=$1 steps=$2 limit=$3
  shift 3
  timeout $limit python3 tests/zoo/model_zoo.py --lib /tmp/bb/lib/libdeepum.so /tmp/bn/lib/libdeepum.so \
    --sweep /tmp/bn/tests/sweep --out $OUT/$name --modes "fastest 2x" --steps $steps --only "$@" > $OUT/call2-$name.txt 2>&1
  echo "zoo $name exit $? at $(( $(date +%s)-s ))s"
  mv $OUT/$name/zoo.json $OUT/call2-$name.json 2>/dev/null
}
zoo decoder 10 230 llama-1b
zoo transformers 10 $(( 570 - ($(date +%s) - s) )) gpt2-350m bert-large
tar czf $OUT/call2-logs.tar.gz -C $OUT transformers decoder && rm -rf $OUT/transformers $OUT/decoder
mkdir -p /tmp/l && tar xzf $OUT/call2-logs.tar.gz -C /tmp/l
for d in /tmp/l/*/; do tar xzf $d/zoo-logs.tar.gz -C $d 2>/dev/null; done
for f in /tmp/l/*/logs/*fastest*.stats.json; do python3 -c "
import json,sys; s=json.load(open('$f')); p=s['program_thread']; e=s['engine']
print('$(basename $f .stats.json)', 'placements s %.2f' % (p['move_calls_ns']['placements']/1e9), 'evthread waits s %.2f' % (p['eviction_thread_waits_ns']/1e9), 'kept busy', e.get('placements_kept_off_thread','-'), 'faults', s['tracing']['faults'])"; done
for f in /tmp/l/*/logs/*fastest*.log; do echo "$(basename $f .log): $(grep -oE 'time_ms [0-9.]+' $f | awk '{printf "%.0f ", $2}')"; done
grep -hE "^(gpt2|bert|llama)" $OUT/call2-*.txt | tail -9
