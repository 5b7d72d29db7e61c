#!/bin/bash
# Sums the per-swap timings X_SWAPPROF wrote (one file per process): FILE...
for f in "$@"; do
  awk -v name="$(basename "$f")" 'NR>1 && NF==10 {
      n++; mib+=$2; q+=$3; idle+=$4; calls+=$5; hs+=$6; drop+=$7; rw+=$8; cp+=$9; gd+=$10 }
    END { if (n) printf "%-28s swaps %4d  GiB %6.1f  queued %7.0f ms  thread idle %6.0f  calls %6.0f  host sync %6.0f  drop %5.0f | GPU: wait for victims %6.0f  copies %6.0f (%.1f GB/s)  drop %5.0f\n",
      name, n, mib/1024, q, idle, calls, hs, drop, rw, cp, (cp>0? mib*1.048576/cp : 0), gd }' "$f"
done
