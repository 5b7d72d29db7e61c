#!/bin/bash
# Call 3: B now grows the store towards the most the live memory exceeded the limit by (call 2's B
# fell behind GPT-2 350M's swaps); the probe again, with registering small pages beside launches;
# GPT-2 350M, BERT-large and T5-base at 2x under A and B, the order swapped from one to the next.
# From the repository root; results into $OUT.
set -uo pipefail
d=bench/results/2026-12-01-h200-swap-pinning
nvidia-smi --query-gpu=name,driver_version,memory.free,memory.used --format=csv,noheader
$d/ab.sh || exit 1
timeout 120 /tmp/bn/bin/pin_rate_probe 2 > $OUT/call3-pin-probe.txt 2>&1; echo "probe exit $?"; cat $OUT/call3-pin-probe.txt
{ $d/direct2x.sh /tmp/bn/lib/libdeepum.so B gpt2-350m
  $d/direct2x.sh /tmp/bb/lib/libdeepum.so A gpt2-350m
  $d/direct2x.sh /tmp/bb/lib/libdeepum.so A bert-large
  $d/direct2x.sh /tmp/bn/lib/libdeepum.so B bert-large
  $d/direct2x.sh /tmp/bn/lib/libdeepum.so B t5-base
  $d/direct2x.sh /tmp/bb/lib/libdeepum.so A t5-base; } 2>&1 | tee $OUT/call3-direct.txt
cd $OUT && tar czf call3-logs.tar.gz A-* B-* && rm -f A-* B-*
