#!/usr/bin/env python3
"""table.py DIR...: the x floor of main ([1]) and of the eviction thread in the program's context
([2]) for every workload in the unpacked zoo outputs DIR (zoo.json each), their geometric means,
and B's steps against A's."""
import json
import statistics
import sys

rows = {}
for d in sys.argv[1:]:
    for r in json.load(open(f"{d}/zoo.json")):
        if r["mode"].startswith("fastest 2x ["):
            rows.setdefault(r["workload"], {})[r["mode"][-3:]] = r
print(f"{'at 2x':<12} {'native ms':>9} {'floor ms':>8} {'A ms':>7} {'A x floor':>9} {'B ms':>7} {'B x floor':>9} {'B/A':>5}")
for w, r in rows.items():
    a, b = r["[1]"], r["[2]"]
    native = a["median_ms"] / a["x_native"]
    print(f"{w:<12} {native:>9.1f} {a['floor_ms']:>8.1f} {a['median_ms']:>7.1f} {a['x_floor']:>9.2f} "
          f"{b['median_ms']:>7.1f} {b['x_floor']:>9.2f} {b['median_ms'] / a['median_ms']:>5.3f}")
for tag in ("[1]", "[2]"):
    xs = [r[tag]["x_floor"] for r in rows.values()]
    print(f"{tag}: geometric mean {statistics.geometric_mean(xs):.2f}x the floor over {len(xs)} "
          f"({min(xs):.2f}-{max(xs):.2f}), {sum(x <= 2.0 for x in xs)} at most 2.0x")
ratio = statistics.geometric_mean([r["[2]"]["median_ms"] / r["[1]"]["median_ms"] for r in rows.values()])
print(f"[2] against [1]: each step {ratio:.3f} of [1]'s (geometric mean)")
