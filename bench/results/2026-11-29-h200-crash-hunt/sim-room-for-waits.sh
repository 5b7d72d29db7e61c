#!/bin/bash
# sim-room-for-waits.sh SIM (on the CPU, from the repository root; SIM built from d675999 with
# sim-room-for-waits.patch): the eviction a launch waited for one period earlier started L
# operations before that launch comes again (X_ROOM=L; 0: off), its victims none predicted to be
# named before it, at 2x; "L trace ms" a step.
set -uo pipefail
source bench/sim_traces.sh
dir=$(mktemp -d)
unpack_sim_traces "$dir" "$1"
for L in 0 32 64 128 200 400; do
  for t in gpt2 t5-base bert-large llama-1b; do
    # shellcheck disable=SC2046
    echo "$L $t $(X_ROOM=$L "$1" replay "$dir/$t.dtrace" --machine sim/machines/h100.json $(sim_window $t) \
      --oversubscription 2 --policy deepum-swap 2>/dev/null | awk '$1 == "deepum-swap" && NF > 5 {print $2}')"
  done
done
rm -rf "$dir"
