#!/bin/bash
# T=DIR first-steps-sim.sh SIM: GPT-2 350M's committed trace replayed at 2x from its first
# iteration, with the engine's victims (deepum-swap), victims by the trace's true next use
# (deepum-swap-oracle) and least recently named (deepum-swap-lru): each iteration's time and GiB
# copied to the GPU (and the trace's own compute time), from the differences of replays measured after 0, 1 and 2 iterations of
# warm-up (five in all). first-steps-sim.txt: 391ee5c's simulator.
for p in deepum-swap deepum-swap-oracle deepum-swap-lru; do
  for W in 0 1 2; do
    "$1" replay $T/gpt2-350m.dtrace --iterations 5 --warmup $W --oversubscription 2 --policy $p --json 2>/dev/null |
      python3 -c "import json,sys; p=json.load(sys.stdin)['policies'][0]; print(p['total_ns']/1e6, p['h2d_bytes']/2**30, p['compute_ns']/1e6)"
  done | paste -sd' ' | awk -v p=$p '{printf "%-20s first %.0f ms, second %.0f ms, then %.0f ms each (of them computing %.0f, %.0f, %.0f); GiB to the GPU: %.1f, %.1f, then %.1f each\n", p, $1-$4, $4-$7, $7/3, $3-$6, $6-$9, $9/3, $2-$5, $5-$8, $8/3}'
done
