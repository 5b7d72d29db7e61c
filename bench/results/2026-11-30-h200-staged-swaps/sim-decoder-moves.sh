#!/bin/bash
# The 1B decoder's swapped blocks replayed at 2x (its trace recorded at 2x, ten steps): what became
# of each block a swap took out, by the engine's period (a loop of two steps). A build of deepum-sim
# with sim-moves.patch prints each (X_MOVES=1): copied back ahead, copied back at the launch naming
# it (and whether that launch's naming repeated one period earlier), or died in the store unread.
#   sim-decoder-moves.sh DEEPUM_SIM_WITH_SIM_MOVES_PATCH
set -euo pipefail
sim=$1
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
xz -dc "$here/../2026-11-29-h200-zoo-traces/llama-1b-2x.dtrace.xz" > "$t/llama.dtrace"
X_MOVES=1 "$sim" replay "$t/llama.dtrace" --oversubscription 2 --policy deepum-swap --iterations 10 --warmup 4 \
  > "$t/out.txt" 2> "$t/moves.txt"
grep -E "^deepum-swap" "$t/out.txt"
python3 - "$t/out.txt" "$t/moves.txt" <<'PY'
import re, sys, collections
period = int(re.search(r"loop of addresses (\d+) operations", open(sys.argv[1]).read()).group(1))
gib = lambda blocks: blocks * 2 / 1024
rows = collections.defaultdict(collections.Counter)
for line in open(sys.argv[2]):
    f = line.split()
    if not f or f[0] != "X_MOVES":
        continue
    kind, since, at = f[1], int(f[2]), int(f[3])
    if kind == "at-launch":
        kind += " (named one period earlier)" if f[4] == "1" else " (not named one period earlier)"
    if since < 200:
        rows[at // period][kind + ", within 200 operations of the swap"] += 1
    rows[at // period][kind] += 1
print(f"period {period} operations (two steps); GiB of 2 MB blocks by period, after the swap that took them out")
for p in sorted(rows):
    print(f"period {p}:")
    for kind in sorted(rows[p]):
        print(f"  {kind:70s} {gib(rows[p][kind]):7.1f}")
PY
rm -rf "$t"
