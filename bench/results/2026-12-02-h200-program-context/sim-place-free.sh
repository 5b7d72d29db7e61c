#!/bin/bash
# sim-place-free.sh SIM: the committed traces at 2x, replayed with the machine model as it is and
# with place_holds_thread false (placements and drops never hold the program's thread), deepum-swap.
# From anywhere; traces unpacked into a temporary folder.
set -euo pipefail
sim=$(realpath "$1")
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
unpack_sim_traces "$t" "$sim"
"$sim" machine | sed 's/"place_holds_thread": true/"place_holds_thread": false/' > "$t/free.json"
printf "%-12s %10s %10s %7s\n" trace "as is ms" "free ms" "free/is"
for n in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  w=$(sim_window $n)
  a=$("$sim" replay "$t/$n.dtrace" --oversubscription 2 $w --policy deepum-swap | awk '/^deepum-swap /{print $2}')
  b=$("$sim" replay "$t/$n.dtrace" --machine "$t/free.json" --oversubscription 2 $w --policy deepum-swap |
    awk '/^deepum-swap /{print $2}')
  printf "%-12s %10.1f %10.1f %7.3f\n" $n $a $b "$(echo "$b / $a" | bc -l)"
done
