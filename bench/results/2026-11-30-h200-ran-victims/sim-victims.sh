#!/bin/bash
# The simulator on traces recorded without a limit, with experiments.patch applied and deepum-sim
# built (no device): (1) the 1B decoder at 2x, steps 3-4 of the trace (operations 5164-10327),
# each victim's next naming in the trace (X_PROBE=1: how many operations later, and whether its
# buffer was returned first), victims by the engine's predicted next use and by the trace's true
# next use (X_ORACLE=1), with and without copies back ahead (-now); (2) the batch an eviction frees
# divided by 1, 2, 4, 8 (X_BATCHDIV) on seven traces: the whole replay's step time and GiB each way.
# X_NOEND=1 throughout: every other decision as ad2f967 makes it.
#   sim-victims.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sim=$1/bin/deepum-sim
t=$(mktemp -d)
for name in llama-1b bert-large t5-base densenet201; do xz -dc "$here/../2026-11-28-h200-traces/$name.dtrace.xz" > "$t/$name.dtrace"; done
for name in gpt2-350m resnet50 bert-base; do xz -dc "$here/../2026-11-29-h200-suite-sim/$name.dtrace.xz" > "$t/$name.dtrace"; done
for policy in deepum-swap deepum-swap-now; do
  for oracle in "" X_ORACLE=1; do
    echo "== llama-1b 2x, $policy ${oracle:-predicted next use}, victims of operations 5164-10327"
    env $oracle X_NOEND=1 X_PROBE=1 X_FROM=5164 X_TO=10328 "$sim" replay "$t/llama-1b.dtrace" --oversubscription 2 \
      --policy $policy --iterations 5 --warmup 2 2>&1 | grep -E "victims|  at |^deepum|^belady"
  done
done
echo "== the batch divided by D: whole replay at 2x, deepum-swap"
for name in llama-1b bert-large t5-base densenet201 gpt2-350m resnet50 bert-base; do
  for d in 1 2 4 8; do
    printf "%-12s D %-2s " $name $d
    X_NOEND=1 X_BATCHDIV=$d "$sim" replay "$t/$name.dtrace" --oversubscription 2 --policy deepum-swap 2>&1 |
      awk '/^deepum-swap /{print "step ms", $2, "H2D GiB", $6, "D2H GiB", $7}'
  done
done
rm -rf "$t"
