#!/usr/bin/env python3
"""The 2x rows of calls 2, 4 and 5 (callN-zoo.txt) in one table, with GPT-2 350M's steps from
call 3's direct run of the change (its zoo run in call 2 stopped at the watchdog), and the
geometric mean of x floor. Run from this folder: python3 table.py > table.txt"""
import math
import re
from pathlib import Path

rows, native, link = {}, {}, {}
for call in (2, 4, 5):
    text = Path(f"call{call}-zoo.txt").read_text()
    rate = re.search(r"to the GPU ([0-9.]+) GB/s, to the host ([0-9.]+)", text)
    for line in text.splitlines():
        f = line.split()
        if len(f) < 9 or f[1] not in ("native", "fastest") or not re.match(r"[0-9.]+$", f[3 if f[1] == "native" else 4]):
            continue
        if f[1] == "native":
            native[f[0]] = float(f[3])
        else:
            rows[f[0]] = dict(call=call, ms=float(f[4]), floor=float(f[6]), x=float(f[7]), verdict=f[9],
                              p50=f[10], p99=f[11], moves=f[12])
            link[f[0]] = f"{rate.group(1)}/{rate.group(2)}"
steps = [float(l.split()[5]) for l in Path("call3-gpt2-350m-2x-bn.log").read_text().splitlines() if l.startswith("step ")]
ms = sorted(steps[2:])[len(steps[2:]) // 2]  # the median of the steps from the third on
floor = rows["gpt2-350m"]["floor"]
rows["gpt2-350m"].update(call=3, ms=ms, x=ms / floor, verdict="call3", p50="-", p99="-", moves="-")
print(f"{'workload':16} {'call':>4} {'native':>8} {'2x ms':>8} {'floor':>7} {'x floor':>7} {'x nat':>6} {'p50 us':>7} {'p99 us':>8} {'moves':>7}  link GB/s")
for name, r in rows.items():
    print(f"{name:16} {r['call']:>4} {native[name]:8.1f} {r['ms']:8.1f} {r['floor']:7.1f} {r['x']:7.2f} "
          f"{r['ms'] / native[name]:6.2f} {r['p50']:>7} {r['p99']:>8} {r['moves']:>7}  {link[name]}")
xs = [r["x"] for r in rows.values()]
print(f"\ngeometric mean of x floor over {len(xs)} workloads: {math.exp(sum(map(math.log, xs)) / len(xs)):.2f}"
      f" ({min(xs):.2f}-{max(xs):.2f}); at most 2.0x: {sum(x <= 2.0 for x in xs)} of {len(xs)}")
