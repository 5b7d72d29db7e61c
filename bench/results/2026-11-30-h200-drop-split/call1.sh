#!/bin/bash
# The eviction thread's drops split into waits for copies and drop calls, on main: `ctest -L gpu`,
# then the zoo at 2x (the 1B decoder ten steps, four other shapes six). From the repository root;
# results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
DEEPUM_BUILD_TARGETS="" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF > /tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bn && NCCL_NVLS_ENABLE=0 timeout 200 ctest -L gpu -j4 --output-on-failure > $OUT/ctest-gpu.txt 2>&1; echo "ctest exit $?")
zoo() { python3 tests/zoo/model_zoo.py --lib /tmp/bn/lib/libdeepum.so --sweep /tmp/bn/tests/sweep --modes "fastest 2x" "$@"; }
timeout $(( 590 - ($(date +%s)-s) )) bash -c "$(declare -f zoo); zoo --out $OUT/zoo-decoder --steps 10 --only llama-1b" > $OUT/zoo-decoder.txt 2>&1
echo "decoder exit $? at $(( $(date +%s)-s ))s"
timeout $(( 590 - ($(date +%s)-s) )) bash -c "$(declare -f zoo); zoo --out $OUT/zoo --steps 6 --only bert-large t5-base resnet152 cuda-sweep" > $OUT/zoo.txt 2>&1
echo "zoo exit $? at $(( $(date +%s)-s ))s"
tar czf $OUT/logs.tar.gz -C $OUT zoo-decoder zoo 2>/dev/null && rm -rf $OUT/zoo-decoder $OUT/zoo
grep -E "tests passed|tests failed|Failed|Timeout" $OUT/ctest-gpu.txt | tail -4
tail -8 $OUT/zoo-decoder.txt; tail -12 $OUT/zoo.txt
