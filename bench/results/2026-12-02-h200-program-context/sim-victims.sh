#!/bin/bash
# sim-victims.sh SIM: the committed traces at 2x under deepum-swap with victims by predicted next
# use (as the library) and by the trace's true next use (-oracle), with what each one's victims
# cost (--victims: GiB written to the host, and those dead before named again). From anywhere.
set -euo pipefail
sim=$(realpath "$1")
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
t=$(mktemp -d) && trap 'rm -rf "$t"' EXIT
unpack_sim_traces "$t" "$sim"
for n in gpt2 resnet llama-1b bert-large t5-base densenet201 sweep; do
  echo "== $n"
  "$sim" replay "$t/$n.dtrace" --oversubscription 2 $(sim_window $n) --policy deepum-swap,deepum-swap-oracle --victims |
    grep -E "^(deepum-swap|belady)"
done
