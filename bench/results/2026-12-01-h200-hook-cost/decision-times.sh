#!/bin/bash
# T=DIR decision-times.sh NAME=SIM...: each simulator build's decision times (decision-times-flush.patch
# on top of it) with XT_FLUSH_MB MiB (default 4) written before each decision, on four committed
# traces (T as for ../2026-11-30-h200-peak-ahead/sim-ab.sh) at 1x and 2x, the builds taking turns,
# twice. decision-times-flush.txt: main=8ff2a57, noC=3c92ab0, C=change.patch's form;
# decision-times-fit-1x.txt: at 1x only, main, noC and skip=change2.patch's form;
# decision-times-cache.txt: main alone at 0, 4 and 16 MiB on BERT-large.
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
for n in bert-large llama-1b t5-base resnet; do
  w=$(sim_window $n)
  for R in 1 2; do
    for turn in 1 2; do
      for build in "$@"; do
        printf "%-10s %sx %-4s " $n $R "${build%%=*}"
        XT_FLUSH_MB=${XT_FLUSH_MB:-4} "${build#*=}" replay $T/$n.dtrace $w --oversubscription $R --policy deepum-swap 2>&1 >/dev/null |
          grep "XT n" | cut -c24-70
      done
    done
  done
done
