#!/bin/bash
# Copies back ahead and discards on streams of their own (X_RSTREAM=1, experiments.patch; the
# simulator models them in that patch too) in deepum-sim: each committed trace replayed at 2x and 3x
# by the engine's policy, step ms / GiB copied to the GPU over the steps measured.
#   sim-streams.sh SIM
set -euo pipefail
sim=$1
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../sim_traces.sh"
t=$(mktemp -d)
unpack_sim_traces "$t" "$sim"
for n in bert-base gpt2-350m resnet50; do
  xz -dc "$here/../2026-11-29-h200-suite-sim/$n.dtrace.xz" > "$t/$n.dtrace"
done
printf "%-12s %4s %16s %16s\n" trace R default "own streams"
for n in gpt2 gpt2-350m bert-base bert-large t5-base resnet resnet50 densenet201 llama-1b sweep; do
  w=$(sim_window $n)
  for r in 2 3; do
    printf "%-12s %4s" $n ${r}x
    for x in X_RSTREAM_OFF X_RSTREAM; do
      # shellcheck disable=SC2086
      ms=$( (env $x=1 "$sim" replay "$t/$n.dtrace" $w --oversubscription $r --policy deepum-swap 2>/dev/null || true) |
        awk '$1=="deepum-swap"{print $2 "/" $6; exit}')
      printf " %16s" "${ms:--}"
    done
    echo
  done
done
rm -rf "$t"
