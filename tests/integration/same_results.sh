#!/usr/bin/env bash
# same_results.sh LIB PROGRAM ARGS...: runs PROGRAM natively, then under libdeepum.so with the
# environment the test sets, and requires the same `result ...` lines from both (a Python script is
# run with the Python that holds PyTorch). Skips (77) without a GPU, or without PyTorch for a .py.
# RESULT_LINES: the part of a line compared (a grep -o pattern; default the `result ...` lines).
set -euo pipefail
pattern=${RESULT_LINES:-'^result .*'}
lib=$1
shift
source "$(dirname "$0")/gpu_available.sh"
run=("$@")
if [[ $1 == *.py ]]; then
  source "$(dirname "$0")/pytorch_available.sh"
  run=("$python" "$@")
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
env -u DEEPUM_RESIDENT_LIMIT "${run[@]}" >"$work/native.log" 2>&1 || { cat "$work/native.log"; exit 1; }
status=0
LD_PRELOAD="$lib" "${run[@]}" >"$work/deepum.log" 2>&1 || status=$?
[[ $status -eq 0 ]] || { cat "$work/deepum.log"; echo "FAIL: exit $status under deepum"; exit 1; }
grep -o "$pattern" "$work/native.log" >"$work/native.results" || true
grep -o "$pattern" "$work/deepum.log" >"$work/deepum.results" || true
[[ -s $work/native.results ]] || { cat "$work/native.log"; echo "FAIL: no result lines natively"; exit 1; }
if ! diff "$work/native.results" "$work/deepum.results"; then
  cat "$work/deepum.log"
  echo "FAIL: results differ under deepum"
  exit 1
fi
grep -E 'deepum verdict: ' "$work/deepum.log" || true
echo "PASS: $(wc -l <"$work/native.results") result lines identical under deepum"
