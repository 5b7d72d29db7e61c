#!/bin/bash
# Call 3: tracer_stress (the gpu_tracer_stress test's program and arguments, deepum's defaults)
# under the working tree and under 1d6955d (since-1d6955d.patch taken back out), 24 runs each,
# taking turns; a crash is shown with every thread's stack where gdb exists. Run from the
# repository root; results into $OUT.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,memory.free --format=csv,noheader
s=$(date +%s)
here=bench/results/2026-11-29-h200-spare-room
rm -rf /tmp/base && cp -a . /tmp/base && (cd /tmp/base && patch -s -R -p1 < $here/since-1d6955d.patch) || exit 1
targets="deepum tracer_stress stress_kernels stress_kernels_rt"
DEEPUM_BUILD_TARGETS="$targets" /tmp/base/scripts/build.sh /tmp/bb -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildb.log 2>&1 &
DEEPUM_BUILD_TARGETS="$targets" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/buildn.log 2>&1 || { tail -30 /tmp/buildn.log; exit 1; }
wait $! || { tail -30 /tmp/buildb.log; exit 1; }
echo "builds $(( $(date +%s)-s ))s; gdb: $(command -v gdb || echo none)"
export DEEPUM_ALLOC_LIMIT=1073741824B DEEPUM_LOG_LEVEL=warn  # as the test sets them
run_one() {  # BUILD_DIR LOG
  local b=$1
  local args=("$b/tests/stress_kernels.fatbin" --runtime-lib "$b/tests/libstress_kernels_rt.so" --threads 18 --seconds 5 --watchdog 20)
  if command -v gdb > /dev/null; then
    timeout -k 5 150 gdb -q -batch -ex "set environment LD_PRELOAD=$b/lib/libdeepum.so" -ex "handle SIGUSR1 SIGUSR2 SIG32 SIG33 SIG34 SIG35 nostop noprint pass" \
      -ex run -ex "info threads" -ex "thread apply all bt 25" --args "$b/tests/tracer_stress" "${args[@]}" > "$2" 2>&1
    grep -q "exited normally" "$2"
  else
    LD_PRELOAD=$b/lib/libdeepum.so timeout -k 5 120 "$b/tests/tracer_stress" "${args[@]}" > "$2" 2>&1
  fi
}
mkdir -p $OUT/stress
fails_b=0 fails_n=0
for ((i = 1; i <= 24; ++i)); do
  run_one /tmp/bb $OUT/stress/base-$i.log || { fails_b=$((fails_b + 1)); echo "base run $i failed"; }
  run_one /tmp/bn $OUT/stress/new-$i.log || { fails_n=$((fails_n + 1)); echo "new run $i failed"; }
  (( $(date +%s) - s > 520 )) && { echo "stopped after $i pairs (time)"; break; }
done
echo "failures: 1d6955d $fails_b, working tree $fails_n, at $(( $(date +%s)-s ))s"
# Keep the failed runs' logs.
for f in $OUT/stress/*.log; do
  grep -q "PASS tracer_stress" "$f" && ! grep -q "SIGSEGV\|Segmentation" "$f" && rm -f "$f"
done
tar czf $OUT/call3-stress.tar.gz -C $OUT stress && rm -rf $OUT/stress  # (no failure: the archive held nothing, not kept)
