#!/bin/bash
# sim-extra.sh BASE_SIM SHAPE_PLAN_SIM NEW_SIM: the replays README.md quotes beside sim-compare.txt:
# the decoder at 2x with the shape-plan patch of 2026-11-28-h200-shape-plan (built on fbb60bb), and
# GPT-2 at 3x as it was measured, the card whole and the resident limit a third of 11.18 GiB.
set -uo pipefail
m=sim/machines/h100.json
echo "\$ decoder at 2x, shape-plan.patch"
"$2" replay /tmp/llama-1b.dtrace --machine $m --iterations 5 --warmup 2 --oversubscription 2 --policy deepum-swap
for s in "$1" "$3"; do
  echo "\$ GPT-2, --capacity 80GiB --limit 3.727GiB, $s"
  "$s" replay /tmp/gpt2.dtrace --machine $m --iterations 5 --warmup 2 --capacity 80GiB --limit 3.727GiB \
    --policy deepum-swap
done
