#!/usr/bin/env bash
# crash_stack_check.sh LIB: a program that gets SIGSEGV with LIB (the crash_stack library)
# preloaded prints its stack and still dies of SIGSEGV.
set -uo pipefail
output=$(LD_PRELOAD="$1" bash -c 'kill -SEGV $$' 2>&1)
status=$?
if [[ $status -ne 139 ]]; then
  echo "FAIL: exited with $status, not 139 (SIGSEGV): $output"
  exit 1
fi
if ! grep -q "crash_stack: signal 11 .*its stack:" <<<"$output" || ! grep -q "libcrash_stack.so(+0x" <<<"$output"; then
  echo "FAIL: no stack printed: $output"
  exit 1
fi
echo "PASS: the stack printed, then SIGSEGV"
