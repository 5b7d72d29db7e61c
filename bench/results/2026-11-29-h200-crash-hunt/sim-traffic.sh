#!/bin/bash
# sim-traffic.sh SIM [LOG_SIM] (on the CPU, from the repository root): the committed traces of the
# 1B decoder and GPT-2 124M at 2x under SIM (d675999), with Belady's least bytes at that capacity;
# with LOG_SIM (d675999 with sim-decision-log.patch), GPT-2's decisions that move anything from the
# forward pass's placements to the backward pass's first copies back, one step (operations
# 5187-5500 of the replay).
set -uo pipefail
source bench/sim_traces.sh
dir=$(mktemp -d)
unpack_sim_traces "$dir" "$1"
for t in llama-1b gpt2; do
  # shellcheck disable=SC2046
  "$1" replay "$dir/$t.dtrace" --machine sim/machines/h100.json $(sim_window $t) --oversubscription 2 \
    --policy deepum-swap,oracle 2>&1 | tail -6
done
if [[ -n "${2:-}" ]]; then
  # shellcheck disable=SC2046
  X_DUMP=1 "$2" replay "$dir/gpt2.dtrace" --machine sim/machines/h100.json $(sim_window gpt2) --oversubscription 2 \
    --policy deepum-swap 2>&1 >/dev/null | awk '$1 == "op" && $2 >= 5187 && $2 <= 5500 && NF > 4'
fi
rm -rf "$dir"
