#!/bin/bash
# T=DIR sim-same.sh SIM_A SIM_B: whether two simulator builds print the same replay (steps, bytes,
# moves, the loop's statistics) for each committed trace at 1x, 2x and 3x. sim-same.txt: 3800262
# and 391ee5c, each with ../2026-12-01-h200-hook-cost/decision-times-flush.patch (its timing goes to
# stderr, not compared).
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
for n in gpt2 bert-base bert-large gpt2-350m t5-base llama-1b resnet resnet50 densenet201 sweep; do
  w=$(sim_window $n); case $n in bert-base|gpt2-350m|resnet50) w="--iterations 5 --warmup 2";; esac
  for R in 1 2 3; do
    "$1" replay $T/$n.dtrace $w --oversubscription $R --policy deepum-swap > /tmp/same-a.txt 2>/dev/null
    "$2" replay $T/$n.dtrace $w --oversubscription $R --policy deepum-swap > /tmp/same-b.txt 2>/dev/null
    cmp -s /tmp/same-a.txt /tmp/same-b.txt && echo "$n ${R}x same" || echo "$n ${R}x DIFFERENT"
  done
done
