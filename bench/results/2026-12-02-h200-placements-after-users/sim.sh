#!/bin/bash
# sim.sh SIM: the committed traces replayed by the simulator SIM at 2x and 3x (deepum-swap, sim_window):
# step ms, GiB to the GPU and to the host, the program thread held in placements and drops (all
# iterations). GPT-2 at 3x: a kernel names more than the limit, no replay.
sim=$1; dir=$(mktemp -d); source "$(dirname "$0")/../../sim_traces.sh"; unpack_sim_traces "$dir" "$sim"; cd "$dir"
for t in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  for r in 2 3; do
    printf "%-12s %sx " $t $r
    $sim replay $t.dtrace $(sim_window $t) --oversubscription $r --policy deepum-swap 2>&1 | awk '/^deepum-swap /{printf "%s %s %s ", $2, $6, $7} /held/{match($0,/held [0-9.]+ ms/); print substr($0,RSTART,RLENGTH); n=1} END{if (!n) print "-"}'
  done
done
