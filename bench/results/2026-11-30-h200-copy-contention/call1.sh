#!/usr/bin/env bash
# Builds bench/swap_call_probe.cu and runs it twice at 256 MiB per array (four arrays), once at 1 GiB.
set -u
nvidia-smi --query-gpu=name,driver_version,memory.used,memory.total --format=csv,noheader
nvcc -O2 -std=c++20 -arch=native -Ibench bench/swap_call_probe.cu -lcuda -o /tmp/swap_call_probe || exit 1
for mib in 256 256 1024; do
  echo "=== swap_call_probe $mib"
  timeout 180 /tmp/swap_call_probe $mib
done 2>&1 | tee $OUT/call1-probe.txt
