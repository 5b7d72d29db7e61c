#!/bin/bash
# copy-counts.sh DUMP_SIM (on the CPU, from the repository root): the operations the replay decides
# for the decoder's trace at 2x (this folder) and its limit-free trace of 2026-11-28, counted from
# the operation list of deepum-sim built with sim-op-dump.patch (kernels, then copies by kind and
# size: 1 memcpy, 2 memset), beside what the library counted in the 2x run (call1-logs.tar.gz).
set -uo pipefail
here=bench/results/2026-11-29-h200-zoo-traces
dir=$(mktemp -d)
xz -dc "$here/llama-1b-2x.dtrace.xz" > "$dir/2x.dtrace"
xz -dc bench/results/2026-11-28-h200-traces/llama-1b.dtrace.xz > "$dir/free.dtrace"
count() {  # TRACE ITERATIONS WARMUP
  "$1" replay "$2" --machine sim/machines/h100.json --iterations "$3" --warmup "$4" --oversubscription 2 \
    --policy deepum-swap 2> "$dir/ops.txt" > /dev/null
  echo "kernels $(grep -c '^K' "$dir/ops.txt"), copies $(grep -c '^C' "$dir/ops.txt"); copies by kind and bytes:"
  awk '$1 == "C" {print $3, $4}' "$dir/ops.txt" | sort | uniq -c | sort -rn
}
echo "== the 2x trace, ten steps"
count "$1" "$dir/2x.dtrace" 10 4
echo "== the limit-free trace of 2026-11-28, five steps"
count "$1" "$dir/free.dtrace" 5 2
echo "== the library, the 2x run"
tar xzf "$here/call1-logs.tar.gz" -C "$dir"
python3 - "$dir/llama-1b/logs/llama-1b-fastest-2x.stats.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("operations", d["engine"]["moves"]["operations"], "copies", d["engine"]["moves"]["copies"],
      "kernel launches", d["program_thread"]["launch_callback"]["count"])
PY
rm -rf "$dir"
