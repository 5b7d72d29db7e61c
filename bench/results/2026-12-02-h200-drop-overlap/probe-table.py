#!/usr/bin/env python3
"""probe-table.py FILE...: the medians over drop_overlap_probe's runs at 256 MiB in the files
(callN-probe.txt): per order, the way out's GB/s and the drop call's ms, alone and beside copies
back, and how many runs each median is of."""
import re
import statistics
import sys

rows = {}
for path in sys.argv[1:]:
    size = None
    for line in open(path):
        if m := re.match(r"(\d+) arrays of (\d+) MiB", line):
            size = int(m.group(2))
            continue
        m = re.match(r"(.+?)\s+(nothing|copies back)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+\d+)?$", line.rstrip())
        if m and size == 256:
            rows.setdefault((m.group(1), m.group(2)), []).append((float(m.group(4)), float(m.group(5))))
print(f"{'order':<16} {'beside':<12} {'runs':>4} {'out GB/s':>9} {'drop call ms':>13}")
for (order, beside), runs in rows.items():
    print(f"{order:<16} {beside:<12} {len(runs):>4} {statistics.median(r[0] for r in runs):>9.1f} "
          f"{statistics.median(r[1] for r in runs):>13.2f}")
