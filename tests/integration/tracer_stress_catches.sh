#!/usr/bin/env bash
# tracer_stress_catches.sh PROGRAM FATBIN RUNS [ARGS...]: runs tests/programs/tracer_stress with
# --old-callback-pattern 1 (the program subscribes to CUPTI as deepum once did; deepum is not
# loaded) up to RUNS times; passes at the first run its watchdog reports hung (exit 3), fails when
# every run finishes: then the load does not find that deadlock on this driver.
set -uo pipefail
program=$1 fatbin=$2 runs=$3
shift 3
source "$(dirname "$0")/gpu_available.sh"
for ((run = 1; run <= runs; ++run)); do
  timeout -k 5 120 "$program" "$fatbin" "$@" --old-callback-pattern 1
  status=$?
  if [[ $status -eq 3 ]]; then
    echo "PASS: run $run of $runs hung with the old callback pattern, as it should"
    exit 0
  fi
  [[ $status -eq 77 ]] && exit 77
  echo "run $run of $runs: exit $status, no hang"
done
echo "FAIL: the old callback pattern did not hang in $runs runs: this load does not find that deadlock here"
exit 1
