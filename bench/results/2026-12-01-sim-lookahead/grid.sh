#!/bin/bash
# SIM=deepum-sim (built from e62ea87 with lookahead.patch) T=DIR grid.sh: the committed traces at
# 2x, step ms and GiB moved each way, with the copies back planned further ahead
# (DEEPUM_X_AHEAD_OPS: operations ahead, 128 by default; DEEPUM_X_AHEAD_BATCHES: batches copied back
# ahead and not named yet, 1 by default; DEEPUM_X_GUARD=1: the evictions that make their room take
# only blocks predicted to be named after the furthest operation planned for).
cd "$(dirname "$0")/../../.." && source bench/sim_traces.sh
for n in t5-base bert-large resnet llama-1b; do
  w=$(sim_window $n)
  for cfg in "128 1 0" "512 1 0" "512 2 0" "512 2 1" "1024 2 1"; do
    set -- $cfg
    printf "%-10s ops %4s batches %s guard %s: " $n $1 $2 $3
    DEEPUM_X_AHEAD_OPS=$1 DEEPUM_X_AHEAD_BATCHES=$2 DEEPUM_X_GUARD=$3 $SIM replay $T/$n.dtrace $w --oversubscription 2 \
      --policy deepum-swap --json 2>/dev/null | python3 -c "
import json,sys; p=json.load(sys.stdin)['policies'][0]; print('%.1f ms  in %.1f out %.1f GiB'%(p['step_ns']/1e6, p['h2d_bytes']/2**30, p['d2h_bytes']/2**30))"
  done
done
