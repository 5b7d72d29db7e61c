#!/bin/bash
# belady.sh SIM: each trace at 2x, deepum-swap's volume against Belady's MIN (the least any victim
# choice moves at that capacity, dead blocks free), on the CPU. SIM is deepum-sim from the tree as
# committed; the traces are those of ../2026-11-26-engine-h200 and ../2026-11-28-h200-traces, and
# the generated sweep.
set -uo pipefail
sim=$1
# shellcheck source=bench/sim_traces.sh
source "$(dirname "$0")/../../sim_traces.sh"
traces=$(mktemp -d)
trap 'rm -rf "$traces"' EXIT
unpack_sim_traces "$traces" "$sim"
printf '%-12s %6s %12s %12s %12s %12s %10s\n' trace iters "swap in GiB" "swap out" "belady in" "belady out" "excess"
for t in gpt2 resnet sweep bert-large t5-base densenet201 llama-1b; do
  # shellcheck disable=SC2046
  "$sim" replay "$traces/$t.dtrace" $(sim_window "$t") --oversubscription 2 --policy deepum-swap --json |
    python3 -c '
import json, sys
r = json.load(sys.stdin); s = r["policies"][0]; b = r["belady"]; n = r["iterations"]; g = 2**30
excess = (r["footprint_bytes"] - r["capacity_bytes"]) / g
print("%-12s %6d %12.2f %12.2f %12.2f %12.2f %10.2f" % (sys.argv[1], n, s["h2d_bytes"] / g / n, s["d2h_bytes"] / g / n,
      b["to_gpu_bytes"] / g / n, b["to_host_bytes"] / g / n, excess))' "$t"
done
echo "(per measured iteration; excess = footprint - capacity, what the floor assumes moves each way)"
