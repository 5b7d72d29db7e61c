#!/usr/bin/env python3
"""Median of per-run median step times, per group, and each group's ratio to the first.

    median_of_runs.py LABEL run.json [run.json ...] LABEL run.json ...

Between-process noise on a launch-bound workload is several percent, so groups of interleaved
runs are compared by the median of their medians. Prints a Markdown table.
"""

from __future__ import annotations

import json
import statistics
import sys


def main(argv: list[str]) -> int:
    groups: dict[str, list[float]] = {}
    label = None
    for arg in argv:
        if arg.endswith(".json"):
            if label is None:
                print("a label must come first", file=sys.stderr)
                return 2
            groups[label].append(float(json.load(open(arg))["median_step_ms"]))
        else:
            label = arg
            groups[label] = []
    if not groups:
        print(__doc__, file=sys.stderr)
        return 2
    first = statistics.median(next(iter(groups.values())))
    print("| group | runs | per-run medians ms | median of medians ms | vs first |")
    print("|---|---|---|---|---|")
    for name, values in groups.items():
        m = statistics.median(values)
        print(f"| {name} | {len(values)} | {', '.join(f'{v:.2f}' for v in values)} | {m:.2f} | "
              f"{m / first:.3f} ({100 * (m / first - 1):+.1f}%) |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
