#!/bin/bash
# belady.sh SIM: each trace at 2x, deepum-swap's volume against Belady's MIN (the least any victim
# choice moves at that capacity, dead blocks free), on the CPU. SIM is deepum-sim from the tree as
# committed; the traces are those of ../2026-11-26-engine-h200 and ../2026-11-28-h200-traces, and
# the generated sweep.
set -uo pipefail
sim=$1
here=$(dirname "$0")
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
xz -dc "$here/../2026-11-26-engine-h200/gpt2-124m-b8.dtrace.xz" > "$traces/gpt2.dtrace"
xz -dc "$here/../2026-11-26-engine-h200/resnet152-b32.dtrace.xz" > "$traces/resnet.dtrace"
for t in llama-1b bert-large t5-base densenet201; do
  xz -dc "$here/../2026-11-28-h200-traces/$t.dtrace.xz" > "$traces/$t.dtrace"
done
"$sim" generate --model sweep --iterations 8 --out "$traces/sweep.dtrace" > /dev/null
printf '%-12s %6s %12s %12s %12s %12s %10s\n' trace iters "swap in GiB" "swap out" "belady in" "belady out" "excess"
for t in gpt2 resnet sweep bert-large t5-base densenet201 llama-1b; do
  it=5 wu=2
  case $t in resnet | bert-large) it=4 ;; sweep) it=8 wu=3 ;; esac
  "$sim" replay "$traces/$t.dtrace" --iterations $it --warmup $wu --oversubscription 2 --policy deepum-swap --json |
    python3 -c '
import json, sys
r = json.load(sys.stdin); s = r["policies"][0]; b = r["belady"]; n = r["iterations"]; g = 2**30
excess = (r["footprint_bytes"] - r["capacity_bytes"]) / g
print("%-12s %6d %12.2f %12.2f %12.2f %12.2f %10.2f" % (sys.argv[1], n, s["h2d_bytes"] / g / n, s["d2h_bytes"] / g / n,
      b["to_gpu_bytes"] / g / n, b["to_host_bytes"] / g / n, excess))' "$t"
done
echo "(per measured iteration; excess = footprint - capacity, what the floor assumes moves each way)"
