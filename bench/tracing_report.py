#!/usr/bin/env python3
"""Tabulate deepum's tracing statistics from the stats_file JSON of several runs.

    tracing_report.py run1_stats.json run2_stats.json ...

Prints a Markdown table: launches and the share with managed pointer arguments, fault records
and the share attributed to a kernel, bytes migrated each way, deepum's evictions, and peak
residency (deepum's estimate and the driver's measurement) against the resident limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

GIB = 1024**3


def row(path: Path) -> list[str]:
    stats = json.loads(path.read_text())
    t = stats.get("tracing")
    name = path.name.removesuffix("_stats.json")
    if not t:
        return [name] + ["-"] * 9
    launches = t["launches"]
    decided = t["fault_records_attributed"] + t["fault_records_unattributed"]
    limit = stats["resident_limit_bytes"]
    return [
        name,
        f"{launches}",
        f"{100 * t['launches_with_managed_pointers'] / launches:.1f}%" if launches else "-",
        f"{t['fault_records']} ({t['faults']} faults; {t.get('fault_records_from_prefetch', 0)} prefetch, "
        f"{t.get('fault_records_while_kernel_records_paused', 0)} paused)",
        f"{100 * t['fault_records_attributed'] / decided:.1f}%" if decided else "-",
        f"{t['bytes_to_gpu'] / GIB:.2f}",
        f"{t['bytes_to_host'] / GIB:.2f}",
        f"{t['deepum_evictions']} ({t['deepum_evicted_bytes'] / GIB:.2f} GiB)",
        f"{limit / GIB:.2f}",
        f"{t['peak_estimated_resident_bytes'] / GIB:.2f} / {t['peak_measured_used_bytes'] / GIB:.2f}",
    ]


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    headers = ["run", "launches", "with managed ptrs", "fault records", "attributed", "GiB to GPU",
               "GiB to host", "deepum evictions", "resident limit GiB", "peak resident GiB est. / measured"]
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for arg in argv:
        print("| " + " | ".join(row(Path(arg))) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
