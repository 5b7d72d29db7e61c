#!/bin/bash
# sim-victim-experiments.sh SIM OUT: the step, the thread held in placements, GiB copied back and placed, at 2x
# and 3x for every trace that ../2026-11-28-h200-traces/sim-compare.sh unpacks into /tmp. Run with the engine as
# committed (and with XDEAD=1 or XPLACE=1 for the patched builds sim-victim-experiments.txt describes).
sim=$1; out=$2; m=sim/machines/h100.json  # run from the repository root
: > $out
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  for r in 2 3; do
    it=5 wu=2
    case $t in resnet|bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
    ( res=$($sim replay /tmp/$t.dtrace --machine $m --iterations $it --warmup $wu --oversubscription $r --policy deepum-swap 2>&1)
      step=$(awk '$1=="deepum-swap" && NF>5 {print $2}' <<<"$res")
      held=$(grep -o 'held [0-9.]* ms' <<<"$res" | awk '{print $2}')
      back=$(grep -o 'copied back [0-9.]* GiB' <<<"$res" | awk '{print $3}')
      placed=$(grep -o 'placed [0-9.]* GiB' <<<"$res" | awk '{print $2}')
      echo "$t ${r}x step=$step held=$held back=$back placed=$placed" >> $out ) &
  done
  wait
done
sort $out -o $out
