#!/bin/bash
# Call 7: streams wait on the GPU for the number of the latest eviction ended, written by the
# eviction thread from the host (gpu-waits.patch, applied to the tree), against the tree without it,
# in the same call: the GPU tests of the engine, then GPT-2 124M, the 1B decoder, the CUDA sweep and
# the CuPy loop at 2x.
set -uo pipefail
d=bench/results/2026-11-28-h200-waits
s=$(date +%s)
rm -rf /tmp/base && mkdir /tmp/base && cp -a . /tmp/base/ && (cd /tmp/base && patch -s -R -p1 < $d/gpu-waits.patch) || exit 1
(cd /tmp/base && DEEPUM_BUILD_TARGETS="deepum sweep" scripts/build.sh /tmp/bb -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 || tail -30 /tmp/buildb.log) &
(scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || tail -30 /tmp/buildn.log) &
wait
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 100 ctest -L gpu -E "tracer_stress|graphs|jax|report|trace_files|ddp|fsdp|two_devices" -j4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $?")
echo "ctest at $(( $(date +%s)-s ))s"; grep -E "tests passed|Failed|Timeout" $OUT/ctest-gpu.txt | head
timeout 270 python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so /tmp/bb/lib/libdeepum.so --sweep /tmp/bn/tests/sweep \
  --out $OUT/zoo --modes "fastest 2x" --only gpt2 llama-1b cuda-sweep cupy > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
for f in $OUT/zoo/logs/*fastest*.log; do echo "== ${f##*/}"; grep -E "program thread|verdict" $f | cut -c1-400; done > $OUT/threads.txt 2>&1
tar czf $OUT/zoo-logs.tar.gz -C $OUT zoo && rm -rf $OUT/zoo
grep -E "fastest|native" $OUT/zoo.txt | tail -12
grep -E "==|program thread" $OUT/threads.txt | cut -c1-260
