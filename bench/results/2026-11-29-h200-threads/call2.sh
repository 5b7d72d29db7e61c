#!/bin/bash
# Call 2: the single-threaded workloads at 2x, the working tree [1] against d3ecd50 [2] (threads.patch
# reversed) in the same call, native first; then threads_streams_check and the lifecycle test again.
set -uo pipefail
d=bench/results/2026-11-29-h200-threads
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/threads.patch) || exit 1
[ -x /tmp/bb/lib/libdeepum.so ] || (cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bb.log 2>&1 || tail -30 /tmp/bb.log) &
(scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
timeout $(( 480 - ($(date +%s)-s) )) python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so \
  --sweep /tmp/bn/tests/sweep --out $OUT/zoo --modes "fastest 2x" --only cuda-sweep cupy gpt2 resnet152 > $OUT/call2-zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
python3 bench/thread_time.py $OUT/zoo/logs/*.stats.json > $OUT/call2-thread.txt 2>&1
tar czf $OUT/call2-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout $(( 585 - ($(date +%s)-s) )) ctest -R "gpu_threads_streams|gpu_pytorch_lifecycle" --repeat until-fail:3 -j2 > $OUT/call2-ctest.txt 2>&1; echo "ctest exit $?")
echo "done at $(( $(date +%s)-s ))s"
grep -E "tests passed|tests failed|Failed|Passed" $OUT/call2-ctest.txt | tail -8
cat $OUT/call2-thread.txt
tail -14 $OUT/call2-zoo.txt
