#!/bin/bash
# sim-compare.sh BASE_SIM NEW_SIM: every trace replayed at 1.5x, 2x and 3x with both deepum-sim
# builds (sim/machines/h100.json), the step in ms. Traces: GPT-2 and ResNet-152 from
# 2026-11-26-engine-h200, the four of this folder, and the generated sweep; unpacked into /tmp.
set -uo pipefail
here=$(dirname "$0")
m=sim/machines/h100.json
for t in gpt2-124m-b8:gpt2 resnet152-b32:resnet; do
  [[ -f /tmp/${t#*:}.dtrace ]] || xz -dc "$here/../2026-11-26-engine-h200/${t%:*}.dtrace.xz" > /tmp/${t#*:}.dtrace
done
for t in llama-1b bert-large t5-base densenet201; do
  [[ -f /tmp/$t.dtrace ]] || xz -dc "$here/$t.dtrace.xz" > /tmp/$t.dtrace
done
[[ -f /tmp/sweep.dtrace ]] || "$1" generate --model sweep --iterations 8 --out /tmp/sweep.dtrace >/dev/null
step() {  # SIM TRACE RATIO: the step in ms, or "-" where it does not replay
  local it=5 wu=2
  case $2 in resnet|bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
  "$1" replay /tmp/$2.dtrace --machine $m --iterations $it --warmup $wu --oversubscription $3 \
    --policy deepum-swap 2>/dev/null | awk '$1 == "deepum-swap" {print $2; found=1} END {if (!found) print "-"}'
}
echo "| trace | ratio | base ms | new ms |"
echo "|---|---|---:|---:|"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  for r in 1.5 2 3; do
    echo "| $t | ${r}x | $(step "$1" $t $r) | $(step "$2" $t $r) |"
  done
done
