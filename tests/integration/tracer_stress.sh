#!/usr/bin/env bash
# tracer_stress.sh LIB PROGRAM FATBIN RUNS [ARGS...]: runs tests/programs/tracer_stress under
# libdeepum.so RUNS times in a row, with deepum's default settings; every run must pass. The program
# has its own watchdog (exit 3 on a deadlock); `timeout` is the last resort. With CRASH_STACK (the
# crash_stack library) preloaded too, a run that crashes prints its stack.
set -uo pipefail
lib=$1 program=$2 fatbin=$3 runs=$4
shift 4
source "$(dirname "$0")/gpu_available.sh"
for ((run = 1; run <= runs; ++run)); do
  LD_PRELOAD="$lib${CRASH_STACK:+ $CRASH_STACK}" DEEPUM_LOG_LEVEL="${DEEPUM_LOG_LEVEL:-warn}" timeout -k 5 120 "$program" "$fatbin" "$@"
  status=$?
  if [[ $status -ne 0 ]]; then
    [[ $status -eq 3 || $status -eq 124 || $status -eq 137 ]] && echo "FAIL: run $run of $runs hung (exit $status)"
    echo "FAIL: run $run of $runs exited with $status"
    exit 1
  fi
  echo "run $run of $runs passed"
done
echo "PASS: $runs runs in a row"
