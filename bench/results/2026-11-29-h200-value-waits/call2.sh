#!/bin/bash
# Call 2: where value_wait_check stops. Natively, under the working tree with the engine (mode
# fast, log level debug) and without it (mode driver); each bounded, with every thread's stack
# taken before a run is killed.
set -uo pipefail
s=$(date +%s)
DEEPUM_BUILD_TARGETS="deepum value_wait_check" scripts/build.sh /tmp/bn -DDEEPUM_BUILD_TESTS=ON -DDEEPUM_WARNINGS_AS_ERRORS=OFF >/tmp/bn.log 2>&1 || tail -30 /tmp/bn.log
echo "build $(( $(date +%s)-s ))s; gdb: $(command -v gdb || echo none); eu-stack: $(command -v eu-stack || echo none)"
check=/tmp/bn/tests/value_wait_check
run() {  # NAME SECONDS ENV...: runs the check with ENV, stacks taken at SECONDS
  local name=$1 limit=$2; shift 2
  local out=$OUT/call2-$name
  env "$@" $check --arrays 4 --mib 64 --rounds 8 > $out.txt 2>&1 &
  local pid=$! began=$(date +%s)
  while kill -0 $pid 2>/dev/null && (( $(date +%s) - began < limit )); do sleep 0.5; done
  if kill -0 $pid 2>/dev/null; then
    if command -v gdb >/dev/null; then
      gdb -p $pid -batch -ex "thread apply all bt 30" > $out.stacks.txt 2>&1
    else
      for t in /proc/$pid/task/*; do echo "== $t $(cat $t/comm)"; cat $t/wchan 2>/dev/null; echo; done > $out.stacks.txt
    fi
    kill -9 $pid; wait $pid 2>/dev/null
    echo "$name: still running after ${limit}s (stacks taken); $(tail -3 $out.txt | tr '\n' '|')"
  else
    wait $pid; echo "$name: exit $? after $(( $(date +%s)-began ))s; $(tail -3 $out.txt | tr '\n' '|')"
  fi
}
lim="DEEPUM_ALLOC_LIMIT=1GiB DEEPUM_RESIDENT_LIMIT=160MiB"
{
  run native 20 A=1
  run driver 25 $lim DEEPUM_MODE=driver LD_PRELOAD=/tmp/bn/lib/libdeepum.so
  run fast 25 $lim DEEPUM_MODE=fast DEEPUM_LOG_LEVEL=debug LD_PRELOAD=/tmp/bn/lib/libdeepum.so
} | tee $OUT/call2-checks.txt
tar czf $OUT/call2-runs.tar.gz -C $OUT $(cd $OUT && ls call2-native* call2-driver* call2-fast*) && (cd $OUT && rm -f call2-native* call2-driver* call2-fast*)
