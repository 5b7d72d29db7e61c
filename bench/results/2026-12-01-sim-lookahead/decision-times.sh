#!/bin/bash
# SIM=deepum-sim (built from 82d2206 with decision-times.patch) T=DIR decision-times.sh: how long the
# engine's model takes to decide each operation in the replays at 2x (the simulator's OrderedPolicy
# times each decision on the host; one core of the build machine, shared), the committed traces and
# the checkpointed decoder's (../2026-12-01-h200-new-shapes/bf16ckpt.dtrace.xz).
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
for n in gpt2 bert-base bert-large gpt2-350m t5-base llama-1b resnet resnet50 densenet201 sweep; do
  w=$(sim_window $n); case $n in bert-base|gpt2-350m|resnet50) w="--iterations 5 --warmup 2";; esac
  echo "== $n"; $SIM replay $T/$n.dtrace $w --oversubscription 2 --policy deepum-swap 2>&1 >/dev/null | grep XT
done
t=$(mktemp -d); xz -dc bench/results/2026-12-01-h200-new-shapes/bf16ckpt.dtrace.xz > $t/x.dtrace
echo "== bf16 checkpointed decoder"; $SIM replay $t/x.dtrace --oversubscription 2 --policy deepum-swap 2>&1 >/dev/null | grep XT
rm -rf $t
