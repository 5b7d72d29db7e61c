#!/bin/bash
# placement.patch (placements after the moves that took their blocks out, not the launch stream's
# work so far, where those moves followed every user) against c15d02d in deepum-sim: each committed
# trace at 2x by the engine's policy, step ms / GiB copied to the GPU over the steps measured.
#   sim-placement.sh C15D02D_SIM PATCHED_SIM
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../sim_traces.sh"
t=$(mktemp -d)
unpack_sim_traces "$t" "$2"
for n in bert-base gpt2-350m resnet50; do
  xz -dc "$here/../2026-11-29-h200-suite-sim/$n.dtrace.xz" > "$t/$n.dtrace"
done
printf "%-12s %4s %16s %16s %7s\n" trace R c15d02d patch change
for n in gpt2 gpt2-350m bert-base bert-large t5-base resnet resnet50 densenet201 llama-1b sweep; do
  w=$(sim_window $n)
  for r in 2; do
    row=()
    for sim in "$1" "$2"; do
      # shellcheck disable=SC2086
      row+=("$( ("$sim" replay "$t/$n.dtrace" $w --oversubscription $r --policy deepum-swap 2>/dev/null || true) |
        awk '$1=="deepum-swap"{print $2 "/" $6; exit}')")
    done
    change=$(awk -v a="${row[0]%%/*}" -v b="${row[1]%%/*}" 'BEGIN{if (a > 0 && b > 0) printf "%+.1f%%", 100 * (b - a) / a; else print "-"}')
    printf "%-12s %4s %16s %16s %7s\n" $n ${r}x "${row[0]:--}" "${row[1]:--}" "$change"
  done
done
rm -rf "$t"
