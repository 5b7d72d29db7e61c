#!/usr/bin/env python3
"""peaks-table.py: call 5's T5-base runs at 2x (call5-zoo.tar.gz, in this folder), per round: the
step (median of steps 1-7) of A, B, A' and B' (A and B with no-peaks.patch) and the evictions ahead
of a predicted peak each made, then B/A and B'/A'."""
import json
import tarfile
from pathlib import Path

here = Path(__file__).parent
names = {"[1]": "A", "[2]": "B", "[3]": "A'", "[4]": "B'"}
print(f"{'round':<6} {'run':<3} {'step ms':>8} {'x floor':>8} {'peak evictions':>15}")
with tarfile.open(here / "call5-zoo.tar.gz") as tar:
    for round_ in (1, 2):
        rows = {r["mode"][-3:]: r for r in json.load(tar.extractfile(f"zoo{round_}/zoo.json"))
                if r["mode"].startswith("fastest 2x [")}
        for mark, name in names.items():
            stats = json.load(tar.extractfile(f"zoo{round_}/logs/t5-base-fastest-2x-{mark[1]}.stats.json"))
            print(f"{round_:<6} {name:<3} {rows[mark]['median_ms']:>8.1f} {rows[mark]['x_floor']:>8.2f} "
                  f"{stats['engine']['moves']['peak_evictions']:>15}")
        print(f"{round_:<6} B/A {rows['[2]']['median_ms'] / rows['[1]']['median_ms']:.3f}, "
              f"B'/A' {rows['[4]']['median_ms'] / rows['[3]']['median_ms']:.3f}")
