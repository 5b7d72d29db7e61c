#!/bin/bash
# The 1B decoder's bytes moved per step at 2x: the engine's replay against the volume bound
# (Belady with deaths known), on the trace recorded at 2x (its bytes, not its times, are the run's).
#   sim-decoder-volume.sh DEEPUM_SIM
set -euo pipefail
sim=$1
here=$(dirname "$0")
t=$(mktemp -d)
xz -dc "$here/../2026-11-29-h200-zoo-traces/llama-1b-2x.dtrace.xz" > "$t/llama.dtrace"
"$sim" replay "$t/llama.dtrace" --oversubscription 2 --policy deepum-swap --iterations 10 --warmup 4 --json > "$t/r.json"
python3 - "$t/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
steps = d["iterations"]
gib = lambda b: b / 2**30 / steps
print(f"capacity {d['capacity_bytes'] / 2**30:.2f} GiB, {steps} steps measured")
print(f"volume bound: to the GPU {gib(d['belady']['to_gpu_bytes']):.2f} GiB a step, to the host {gib(d['belady']['to_host_bytes']):.2f}")
for p in d["policies"]:
    print(f"{p['policy']}: to the GPU {gib(p['h2d_bytes']):.2f} GiB a step, to the host {gib(p['d2h_bytes']):.2f}")
PY
rm -rf "$t"
