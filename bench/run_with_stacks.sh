#!/usr/bin/env bash
# run_with_stacks.sh SECONDS STACKS_FILE COMMAND...: runs COMMAND; if it is still running after
# SECONDS, writes every thread's native stack (cuda-gdb, attached) to STACKS_FILE and kills it.
# Exit: COMMAND's status, or 124 when it was stopped. For finding where a program hangs.
set -uo pipefail
seconds=$1 stacks=$2
shift 2
"$@" &
pid=$!
for ((i = 0; i < seconds * 10; ++i)); do
  kill -0 "$pid" 2>/dev/null || { wait "$pid"; exit $?; }
  sleep 0.1
done
descendants() {  # the process and every process below it
  echo "$1"
  for child in $(pgrep -P "$1"); do descendants "$child"; done
}
for child in $(descendants "$pid" | head -6); do
  echo "== process $child: $(tr '\0' ' ' </proc/"$child"/cmdline 2>/dev/null)" >>"$stacks"
  timeout 25 cuda-gdb -p "$child" -batch -ex "thread apply all bt" >>"$stacks" 2>&1
done
for child in $(descendants "$pid"); do kill -9 "$child" 2>/dev/null; done
wait "$pid" 2>/dev/null
exit 124
