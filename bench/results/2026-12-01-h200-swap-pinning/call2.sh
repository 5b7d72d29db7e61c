#!/bin/bash
# Call 2: what pinning costs by each method, and whether it holds up the program's launches
# (pin_rate_probe, 2 GiB a method); then GPT-2 350M and the 1B decoder at 2x directly under A
# (main's head) and B (the change), the order swapped between the two. From the repository root;
# results into $OUT.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
nvidia-smi --query-gpu=name,driver_version,memory.free,memory.used --format=csv,noheader
grep -i -E "^(MemTotal|MemAvailable)" /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/enabled; nproc
$d/ab.sh || exit 1
timeout 120 /tmp/bn/bin/pin_rate_probe 2 > $OUT/call2-pin-probe.txt 2>&1; echo "probe exit $?"; cat $OUT/call2-pin-probe.txt
{ $d/direct2x.sh /tmp/bb/lib/libdeepum.so A gpt2-350m
  $d/direct2x.sh /tmp/bn/lib/libdeepum.so B gpt2-350m
  $d/direct2x.sh /tmp/bn/lib/libdeepum.so B llama-1b
  $d/direct2x.sh /tmp/bb/lib/libdeepum.so A llama-1b; } 2>&1 | tee $OUT/call2-direct.txt
cd $OUT && tar czf call2-logs.tar.gz A-* B-* && rm -f A-* B-*
