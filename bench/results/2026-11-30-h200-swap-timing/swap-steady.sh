#!/bin/bash
# Call 1's per-swap timings over each run's last steps only (the first two steps learn the loop):
# the swaps whose thread time (idle + calls + host sync + drop) sums to the last steps' time,
# counted from the end. Output: swap-steady.txt.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
t=$(mktemp -d)
tar xzf "$here/call1-runs.tar.gz" -C "$t"
# The last four steps' time of each run, from its log.
for f in "$t"/runs/*.swaps.*; do
  name=$(basename "$f" | cut -d. -f1)
  steps_ms=$(grep -oE 'time_ms [0-9.]+' "$t/runs/$name.log" | tail -4 | awk '{s+=$2} END{printf "%.0f", s}')
  tac "$f" | awk -v name="$name" -v T="$steps_ms" 'NF==10 && $1!="number" {
      if (t + $4 + $5 + $6 + $7 > T) exit
      t += $4 + $5 + $6 + $7; n++; mib += $2; idle += $4; calls += $5; hs += $6; drop += $7; rw += $8; cp += $9; q += $3 }
    END { printf "%-10s last 4 steps %5d ms: %3d swaps, %5.1f GiB; thread idle %5.0f ms, in copy calls %4.0f, waiting for the copies %4.0f, dropping %4.0f; queued %4.0f | GPU: waiting for the victims %4.0f ms, copying %4.0f (%.1f GB/s)\n",
      name, T, n, mib/1024, idle, calls, hs, drop, q, rw, cp, (cp > 0 ? mib * 1.048576 / cp : 0) }'
done
rm -rf "$t"
