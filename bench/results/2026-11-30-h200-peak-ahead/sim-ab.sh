#!/bin/bash
# T=DIR sim-ab.sh R SIM_A SIM_B: each committed trace at R x, step ms and GiB moved each way under two builds.
# T: a folder holding the committed traces (unpack_sim_traces T SIM, and the suite traces of
# ../2026-11-29-h200-suite-sim unpacked as bert-base, gpt2-350m and resnet50.dtrace).
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
R=$1; A=$2; B=$3
printf "%-12s %10s %10s %7s   %s\n" trace "A ms" "B ms" "B/A" "GiB in/out A -> B"
for n in gpt2 bert-base bert-large gpt2-350m t5-base llama-1b resnet resnet50 densenet201 sweep; do
  w=$(sim_window $n); case $n in bert-base|gpt2-350m|resnet50) w="--iterations 5 --warmup 2";; esac
  for s in $A $B; do
    $s replay $T/$n.dtrace $w --oversubscription $R --policy deepum-swap --json 2>/dev/null | python3 -c "
import json,sys; d=json.load(sys.stdin); p=d['policies'][0]; print(p['step_ns']/1e6, p['h2d_bytes']/2**30, p['d2h_bytes']/2**30)"
  done | paste -sd' ' | awk -v n=$n '{printf "%-12s %10.1f %10.1f %7.3f   %.1f/%.1f -> %.1f/%.1f\n", n, $1, $4, $4/$1, $2, $3, $5, $6}'
done
