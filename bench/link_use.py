#!/usr/bin/env python3
"""How a run used the link, step by step, from deepum's Perfetto trace (trace_file).

    python3 bench/link_use.py RUN.perfetto.json --step-kernel update --per-step 16

A step starts at every --per-step-th launch of the kernel whose name contains --step-kernel. For
each step: its length, the time the GPU ran kernels, the time copies to the host (deepum's swaps
out, device-to-host) and to the GPU (its copies back) kept each direction busy, the time both ran
at once, and the MiB each way. A link used well has both directions busy most of the step.
"""

from __future__ import annotations

import argparse
import json
import re

SIZE = re.compile(r"([0-9.]+) (KiB|MiB|GiB)")
UNIT = {"KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0}


def union(intervals: list[tuple[float, float]]) -> list[list[float]]:
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return merged


def within(merged: list[list[float]], lo: float, hi: float) -> float:
    return sum(max(0.0, min(end, hi) - max(start, lo)) for start, end in merged)


def both(a: list[list[float]], b: list[list[float]]) -> list[list[float]]:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        start, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if start < end:
            out.append([start, end])
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def mib(name: str) -> float:
    m = SIZE.search(name)
    return float(m.group(1)) * UNIT[m.group(2)] if m else 0.0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="a .perfetto.json deepum wrote")
    p.add_argument("--step-kernel", required=True, help="part of the name of the kernel that starts a step")
    p.add_argument("--per-step", type=int, default=1, help="its launches per step (default %(default)s)")
    args = p.parse_args()
    with open(args.trace, encoding="utf-8") as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X" and e.get("pid") == 1]
    copies = [e for e in events if e["name"].startswith("memcpy ")]
    kernels = [e for e in events if not e["name"].startswith(("memcpy ", "H2D ", "D2H "))]
    marks = [e["ts"] for e in kernels if args.step_kernel in e["name"]][:: args.per_step]
    span = lambda es: union([(e["ts"], e["ts"] + e["dur"]) for e in es])  # noqa: E731
    ran = span(kernels)
    out = [e for e in copies if e["name"].startswith("memcpy DtoH")]
    back = [e for e in copies if e["name"].startswith("memcpy HtoD")]
    out_busy, back_busy = span(out), span(back)
    overlap = both(out_busy, back_busy)
    print("step  length_ms  kernels_ms  to_host_ms  to_gpu_ms  both_ms  to_host_MiB  to_gpu_MiB")
    for step, (lo, hi) in enumerate(zip(marks, marks[1:])):
        moved = lambda es: sum(mib(e["name"]) for e in es if lo <= e["ts"] < hi)  # noqa: E731
        print(f"{step:4} {(hi - lo) / 1e3:10.1f} {within(ran, lo, hi) / 1e3:11.1f} {within(out_busy, lo, hi) / 1e3:11.1f} "
              f"{within(back_busy, lo, hi) / 1e3:10.1f} {within(overlap, lo, hi) / 1e3:8.1f} {moved(out):12.0f} "
              f"{moved(back):11.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
