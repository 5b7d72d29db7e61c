#!/usr/bin/env bash
# no_gpu_passthrough.sh LIB PROGRAM: with no visible GPU, a program under libdeepum.so gets the same
# CUDA error as without it, deepum says once why it passes calls through, and nothing crashes.
set -euo pipefail
lib=$1 program=$2
export CUDA_VISIBLE_DEVICES=""
native=$("$program" --probe-error)
preloaded=$(LD_PRELOAD="$lib" "$program" --probe-error 2>/tmp/deepum_no_gpu.$$.err)
err=$(cat /tmp/deepum_no_gpu.$$.err); rm -f /tmp/deepum_no_gpu.$$.err
echo "without deepum: $native"
echo "with deepum:    $preloaded"
echo "deepum said:    $err"
[[ "$native" == "$preloaded" ]] || { echo "FAIL: deepum changed the error the program sees"; exit 1; }
[[ "$native" != *"cudaSuccess"* ]] || { echo "FAIL: expected a CUDA error with no visible GPU"; exit 1; }
grep -q "no usable CUDA device" <<<"$err" || { echo "FAIL: deepum did not say why it passes through"; exit 1; }
[[ $(grep -c "no usable CUDA device" <<<"$err") -eq 1 ]] || { echo "FAIL: the notice must come once"; exit 1; }
echo PASS
