#!/bin/bash
# Call 1: the GPU tests, then tracer_stress (gpu_tracer_stress's program and arguments, deepum's
# defaults, crash_stack preloaded) in four loops at once until the call's time is spent, looking for
# the crash seen once in 77 runs. Run from the repository root; results into $OUT.
set -uo pipefail
s=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
echo "tools: $(command -v gdb cuda-gdb perf | tr '\n' ' ')"
scripts/build.sh /tmp/bt -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildt.log 2>&1 || { tail -30 /tmp/buildt.log; exit 1; }
echo "build $(( $(date +%s)-s ))s"
(cd /tmp/bt && timeout 200 ctest -L gpu -j4 -E '^gpu_tracer_stress$' --output-on-failure > $OUT/call1-ctest-gpu.txt 2>&1)
echo "ctest exit $? at $(( $(date +%s)-s ))s"; tail -4 $OUT/call1-ctest-gpu.txt
export DEEPUM_ALLOC_LIMIT=1073741824B DEEPUM_LOG_LEVEL=warn  # as the test sets them
b=/tmp/bt
mkdir -p $OUT/stress
loop() {  # N: runs until the time is spent, keeping failed runs' logs
  local n=$1 i=0
  while (( $(date +%s) - s < 540 )); do
    i=$((i + 1))
    local log=$OUT/stress/loop$n-run$i.log
    LD_PRELOAD="$b/lib/libdeepum.so $b/tests/libcrash_stack.so" timeout -k 5 120 $b/tests/tracer_stress \
      $b/tests/stress_kernels.fatbin --runtime-lib $b/tests/libstress_kernels_rt.so --threads 18 --seconds 5 --watchdog 20 > $log 2>&1
    local status=$?
    if (( status == 0 )); then rm -f $log; else echo "loop $n run $i: exit $status"; fi
    echo "$n $i $status" >> $OUT/stress/runs.txt
  done
}
for n in 1 2 3 4; do loop $n & done
wait
echo "stress runs: $(wc -l < $OUT/stress/runs.txt), failed: $(awk '$3 != 0' $OUT/stress/runs.txt | wc -l), at $(( $(date +%s)-s ))s"
ls $b/tests/libcrash_stack.so >/dev/null || echo "no crash_stack library"
tar czf $OUT/call1-stress.tar.gz -C $OUT stress && rm -rf $OUT/stress
