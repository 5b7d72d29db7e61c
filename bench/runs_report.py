#!/usr/bin/env python3
"""Tabulate oversubscribed runs against native, the reactive baseline and the floor.

    runs_report.py --native native.json --bandwidth bandwidth.json RUN [RUN ...]

Each RUN is a path prefix P with P.json (train_gpt2.py --json) and P_stats.json (deepum's
stats_file). A run's oversubscription factor and mode come from its name, ..._MODE_xFACTOR
(e.g. gpt2_reactive_x2, gpt2_swap_x3), with an optional repeat number (gpt2_swap_x3_r2) that
pairs it with the reactive run of the same repeat. The floor at factor f is suite_report.floor_ms:
the larger of the native step time and the time to move the bytes that must cross the link each
step: with footprint F (native peak reserved) and resident limit L = F / f, F - L in and F - L out,
each direction at its measured large-range prefetch bandwidth, the two overlapped.
Prints a Markdown table; standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from suite_report import floor_ms  # the same floor as the suite's tables

GIB = 1024**3


def load(path: Path) -> dict:
    with path.open(encoding="utf-8") as f:
        return json.load(f)


def losses_equal(a: dict, b: dict) -> str:
    la, lb = a.get("losses") or [], b.get("losses") or []
    if not la or len(la) != len(lb):
        return "n/a"
    worst = max(abs(x - y) / max(abs(x), 1e-12) for x, y in zip(la, lb))
    return "identical" if worst == 0 else f"max rel diff {worst:.1e}"


def peak_cell(peak: int, limit: int) -> str:
    over = f" ({100 * (peak - limit) / limit:+.0f}%)" if limit else ""
    return f"{peak / GIB:.2f} / {limit / GIB:.2f}{over}"


def late_cell(t: dict) -> str:
    """How late fault records reached deepum (upper ends of power-of-two buckets, in ms)."""
    delay = t.get("fault_delay_us")
    return f"{delay['p50'] / 1000:.0f} / {delay['p99'] / 1000:.0f}" if delay else "-"


def over_cell(t: dict) -> str:
    """Time residency (records in time order) spent over the limit, and over it by 5%, of the run."""
    if "over_limit_ms" not in t:
        return "-"
    return (f"{t['over_limit_ms'] / 1000:.1f} / {t['over_limit_5pct_ms'] / 1000:.1f} of "
            f"{t['replayed_ms'] / 1000:.1f}")


def remote_cell(t: dict) -> str:
    """Memory the driver mapped over the link instead of migrating it (its answer to thrashing)."""
    if "remote_map_bytes" not in t:
        return "-"
    return f"{t['remote_map_bytes'] / GIB:.2f} ({t['remote_map_bytes_for_thrashing'] / GIB:.2f})"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--native", required=True, type=Path)
    p.add_argument("--bandwidth", required=True, type=Path, help="prefetch_bandwidth's JSON line")
    p.add_argument("runs", nargs="+")
    args = p.parse_args(argv)

    native = load(args.native)
    bandwidth = load(args.bandwidth)
    h2d = bandwidth["h2d_64MiB_ranges_gbps"] * 1e9
    d2h = bandwidth["d2h_64MiB_ranges_gbps"] * 1e9
    both_ways = bandwidth.get("both_ways_64MiB_ranges_gbps", 0) * 1e9
    native_ms = native["median_step_ms"]
    footprint = native["peak_reserved_bytes"]
    steps = len(native.get("losses") or []) or 1
    print(f"GPU: {native.get('device', '?')}; native median step {native_ms:.1f} ms; footprint "
          f"{footprint / GIB:.2f} GiB; prefetch bandwidth (64 MiB ranges) H2D {h2d / 1e9:.1f} GB/s, "
          f"D2H {d2h / 1e9:.1f} GB/s" +
          (f" (both ways at once {both_ways / 1e9:.1f} GB/s, not in the floor)" if both_ways else "") + "\n")

    rows = []
    reactive: dict[str, dict] = {}
    for prefix in args.runs:
        name = Path(prefix).name
        match = re.search(r"_([A-Za-z0-9-]+)_x([0-9.]+)(_r[0-9]+)?$", name)
        if not match:
            print(f"runs_report: {name}: expected a name ending in _MODE_xFACTOR or _MODE_xFACTOR_rN",
                  file=sys.stderr)
            return 2
        mode, factor = match.group(1), match.group(2)
        repeat = match.group(3) or ""  # compared with the reactive run of the same repeat
        run = load(Path(prefix + ".json"))
        stats = load(Path(prefix + "_stats.json"))
        t = stats.get("tracing", {})
        entry = {"name": name, "mode": mode, "factor": factor, "repeat": repeat, "run": run, "stats": stats,
                 "t": t}
        if mode == "reactive":
            reactive[factor + repeat] = entry
        rows.append(entry)

    headers = ["run", "median step ms", "x native", "x floor", "reactive / this", "losses vs native",
               "faults (vs reactive)", "GiB to GPU / to host per run", "peak resident live estimate / limit GiB",
               "peak resident by records in time order / limit GiB", "s over limit / over +5% of s",
               "fault records late ms p50/p99", "driver remote-mapped GiB (for thrashing)"]
    print("| " + " | ".join(headers) + " |")
    print("|" + "---|" * len(headers))
    for e in rows:
        run, t, stats = e["run"], e["t"], e["stats"]
        ms = run.get("median_step_ms") or float("nan")
        f = float(e["factor"])
        floor = floor_ms(native_ms, footprint, f, bandwidth)
        base = reactive.get(e["factor"] + e["repeat"])
        speedup = f"{base['run']['median_step_ms'] / ms:.2f}" if base else "-"
        faults = t.get("faults", 0)
        fault_share = (f" ({100 * faults / base['t']['faults']:.1f}%)"
                       if base and base["t"].get("faults") else "")
        limit = stats.get("resident_limit_bytes", 0)
        rows_cells = [
            e["name"], f"{ms:.1f}", f"{ms / native_ms:.2f}", f"{ms / floor:.2f} (floor {floor:.0f} ms)",
            speedup, losses_equal(native, run), f"{faults}{fault_share}",
            f"{t.get('bytes_to_gpu', 0) / GIB:.1f} / {t.get('bytes_to_host', 0) / GIB:.1f}",
            peak_cell(t.get("peak_estimated_resident_bytes", 0), limit),
            peak_cell(t["peak_resident_bytes"], limit) if "peak_resident_bytes" in t else "-", over_cell(t),
            late_cell(t), remote_cell(t),
        ]
        print("| " + " | ".join(rows_cells) + " |")
    print(f"\n(runs of {steps} steps; the floor counts F - L bytes each way per step, the two ways overlapped)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
