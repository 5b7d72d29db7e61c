#!/bin/bash
# T=DIR BUILDS="base=SIM change=SIM" misses.sh: cache misses of the model's decisions, counted by cachegrind
# (an L2-sized last level of 2 MiB) in replays with 4 MiB written before each decision (XT_FLUSH_MB,
# ../2026-12-01-h200-hook-cost/decision-times-flush.patch applied to each simulator build), on four
# committed traces (T as for ../2026-11-30-h200-peak-ahead/sim-ab.sh). Printed: the read and write
# misses of the whole replay less the flush's own (one miss per 64 bytes written, 65,536 a
# decision), and per decision. misses.txt: BASE 3800262, CHANGE 391ee5c.
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
for run in "t5-base 1" "t5-base 2" "bert-large 1" "bert-large 2" "llama-1b 1" "resnet 1"; do
  set -- $run; n=$1; R=$2
  for build in $BUILDS; do
    out=/tmp/misses-${build%%=*}-$n-$R.out
    XT_FLUSH_MB=4 valgrind --tool=cachegrind --cache-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL=2097152,16,64 \
      --cachegrind-out-file=$out "${build#*=}" replay $T/$n.dtrace $(sim_window $n) --oversubscription $R \
      --policy deepum-swap > /dev/null 2>&1
    cg_annotate --show=DLmr,DLmw --auto=no $out 2>/dev/null | python3 -c "
import re, sys
total = flush = 0
for line in sys.stdin:
    m = re.match(r'^\s*([\d,]+)\s+(\([^)]*\))?\s*([\d,]+)\s+(\([^)]*\))?\s*(.*)$', line)
    if not m: continue
    n = int(m.group(1).replace(',', '')) + int(m.group(3).replace(',', ''))
    if 'PROGRAM TOTALS' in line: total = n
    elif 'OrderedPolicy::decide(' in m.group(5) and 'ordered_policy.cpp' in m.group(5): flush = n
decisions = flush // 65536
print(f'$n ${R}x ${build%%=*}: misses outside the flush {total - flush}, decisions {decisions}, per decision {(total - flush) / decisions:.0f}')
"
  done
done
