#!/bin/bash
# Call 2: the copy kernel (the working tree; copy-kernel.patch) against the committed build (the
# patch reversed), and the kernel in the eviction thread's own context too (thread-kernel.patch on
# top), at 2x, the native runs shared. First the copy test on the GPU.
set -uo pipefail
d=bench/results/2026-11-28-h200-call-costs
nvidia-smi --query-gpu=name,memory.free --format=csv,noheader
s=$(date +%s)
rm -rf /tmp/base /tmp/thread && mkdir /tmp/base /tmp/thread && cp -a . /tmp/base/ && cp -a . /tmp/thread/
(cd /tmp/base && patch -s -R -p1 < $d/copy-kernel.patch) || exit 1
(cd /tmp/thread && patch -s -p1 < $d/thread-kernel.patch) || exit 1
b() { (cd $1 && DEEPUM_BUILD_TARGETS="$3" scripts/build.sh $2 -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >$2.log 2>&1 || tail -30 $2.log); }
b /tmp/base /tmp/bb "deepum sweep" & b /tmp/thread /tmp/bt "deepum" & b . /tmp/bn "deepum sweep copy_blocks_check" &
wait
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && ctest -R gpu_copy_blocks --output-on-failure) > $OUT/copy-check.txt 2>&1; tail -3 $OUT/copy-check.txt
timeout 420 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so /tmp/bt/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only cuda-sweep gpt2 llama-1b > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*.stats.json; do python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); p=d['program_thread']; m=p['move_calls_ns']; l=p['launch_callback']
print(sys.argv[1].split('/')[-1], 'placements %.2fs waits %.2fs thread %.2fs p50 %.1fus p99 %.1fus' % (m['placements']/1e9, p.get('eviction_thread_waits_ns',0)/1e9, d['engine']['eviction_thread']['move_calls_ns']/1e9, l.get('p50_ns',0)/1e3, l.get('p99_ns',0)/1e3))" $f; done > $OUT/thread.txt 2>&1
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
cat $OUT/thread.txt
tail -14 $OUT/zoo.txt
