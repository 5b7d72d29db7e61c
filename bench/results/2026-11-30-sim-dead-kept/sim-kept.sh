#!/bin/bash
# T=DIR sim-kept.sh R SIM K...: each committed trace at R x, step ms (GiB in/out) with
# dead_kept_operations 0 and each K (the sim build read it from SIM_DEAD_KEPT for this experiment).
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
R=$1; S=$2; shift 2
printf "%-12s %18s" trace "0"; for k in "$@"; do printf " %18s" "$k"; done; echo
for n in gpt2 bert-base bert-large gpt2-350m t5-base llama-1b resnet resnet50 densenet201 sweep; do
  w=$(sim_window $n); case $n in bert-base|gpt2-350m|resnet50) w="--iterations 5 --warmup 2";; esac
  printf "%-12s" $n
  for k in 0 "$@"; do
    SIM_DEAD_KEPT=$k $S replay $T/$n.dtrace $w --oversubscription $R --policy deepum-swap --json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin); p=d['policies'][0]; print('%8.1f %4.1f/%4.1f' % (p['step_ns']/1e6, p['h2d_bytes']/2**30, p['d2h_bytes']/2**30), end=' ')"
  done; echo
done
