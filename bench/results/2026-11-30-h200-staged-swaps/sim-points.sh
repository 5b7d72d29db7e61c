#!/bin/bash
# Each committed trace replayed at 2x and 3x by the engine's policy, by two builds of deepum-sim
# (HEAD's and a change's): step ms / GiB copied to the GPU over the steps measured.
#   sim-points.sh BASE_SIM NEW_SIM
set -euo pipefail
base=$1 new=$2
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../sim_traces.sh"
t=$(mktemp -d)
unpack_sim_traces "$t" "$new"
for n in bert-base gpt2-350m resnet50; do
  xz -dc "$here/../2026-11-29-h200-suite-sim/$n.dtrace.xz" > "$t/$n.dtrace"
done
printf "%-12s %4s %18s %18s\n" trace R base new
for n in gpt2 gpt2-350m bert-base bert-large t5-base resnet resnet50 densenet201 llama-1b sweep; do
  w=$(sim_window $n)
  for r in 2 3; do
    row=""
    for sim in "$base" "$new"; do
      # shellcheck disable=SC2086
      ms=$( ("$sim" replay "$t/$n.dtrace" $w --oversubscription $r --policy deepum-swap 2>/dev/null || true) |
        awk '$1=="deepum-swap"{print $2 "/" $6; exit}')
      row="$row ${ms:--}"  # -: the trace does not fit at that ratio
    done
    printf "%-12s %4s %18s %18s\n" $n ${r}x $row
  done
done
rm -rf "$t"
