#!/bin/bash
# T=DIR BUILDS="base=SIM change=SIM" instructions.sh: the instructions (cachegrind's Ir, no cache
# simulated) of a replay of GPT-2 350M's committed trace at 2x from its first step, and of the
# model's functions that differ (UseHistory::contains, named_one_loop_ago). Builds as misses.sh.
cd "$(dirname "$0")/../../.." || exit 1
for build in $BUILDS; do
  out=/tmp/ir-${build%%=*}.out
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=$out "${build#*=}" replay $T/gpt2-350m.dtrace \
    --iterations 5 --warmup 0 --oversubscription 2 --policy deepum-swap > /dev/null 2>&1
  echo "== ${build%%=*}"
  cg_annotate --auto=no --threshold=0 $out 2>/dev/null | grep -E "PROGRAM TOTALS|UseHistory::contains|named_one_loop_ago|UseHistory::add" | cut -c1-140
done
