#!/usr/bin/env python3
"""Compare train_gpt2.py JSON results against the first file given.

    compare_runs.py native.json deepum.json [more.json ...]
                    [--rel-tol 1e-4] [--max-overhead 0.03] [--markdown]

For every file after the first: per-step losses must match the first file's
within --rel-tol (max relative difference), and its median step time may be
at most (1 + --max-overhead) times the first's. Exits 0 if every check
passes, 1 if any fails (and says which), 2 on unusable input.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2

HEADERS = ["label", "device", "median step ms", "ratio vs first", "max rel loss diff",
           "loss check", "time check", "peak reserved GiB"]


@dataclass
class Run:
    path: Path
    label: str
    data: dict[str, Any]

    @property
    def losses(self) -> list[float]:
        return [float(x) for x in self.data.get("losses") or []]

    @property
    def median_ms(self) -> float | None:
        v = self.data.get("median_step_ms")
        return float(v) if v is not None else None


@dataclass
class Row:
    cells: list[str]
    failures: list[str] = field(default_factory=list)


def load_runs(paths: list[str]) -> list[Run]:
    runs = []
    for p in paths:
        path = Path(p)
        with path.open(encoding="utf-8") as f:
            data = json.load(f)
        if not isinstance(data, dict):
            raise ValueError(f"{p}: top level is not a JSON object")
        runs.append(Run(path, path.stem, data))
    # Same stem in different folders (e.g. native/run.json, deepum/run.json):
    # prefix the parent folder so rows stay distinguishable.
    stems = [r.label for r in runs]
    for r in runs:
        if stems.count(r.label) > 1:
            r.label = f"{r.path.parent.name}/{r.path.stem}"
    return runs


def max_rel_diff(ref: list[float], other: list[float]) -> float:
    worst = 0.0
    for a, b in zip(ref, other, strict=False):  # lengths are checked by the caller
        if math.isnan(a) or math.isnan(b):
            return math.nan
        if a == b:
            continue
        denom = max(abs(a), abs(b))
        worst = max(worst, abs(a - b) / denom if denom > 0 else math.inf)
    return worst


def fmt_float(v: float | None, spec: str) -> str:
    return "n/a" if v is None or math.isnan(v) else format(v, spec)


def compare(runs: list[Run], rel_tol: float, max_overhead: float) -> list[Row]:
    ref = runs[0]
    ref_losses = ref.losses
    ref_ms = ref.median_ms
    rows = []
    for i, run in enumerate(runs):
        failures: list[str] = []
        if run.data.get("completed") is False:
            failures.append(f"run did not complete ({run.data.get('error') or 'no reason given'})")
        losses = run.losses
        ms = run.median_ms

        if i == 0:
            ratio_s, diff_s, loss_check, time_check = "1.000", "0", "ref", "ref"
            if not losses:
                failures.append("reference has no losses")
        else:
            if not losses or not ref_losses:
                diff = None
                loss_check = "FAIL"
                failures.append("no losses to compare")
            elif len(losses) != len(ref_losses):
                diff = max_rel_diff(ref_losses, losses)
                loss_check = "FAIL"
                failures.append(f"{len(losses)} steps vs {len(ref_losses)} in {ref.label}")
            else:
                diff = max_rel_diff(ref_losses, losses)
                if math.isnan(diff):
                    loss_check = "FAIL"
                    failures.append("NaN loss")
                elif diff > rel_tol:
                    loss_check = "FAIL"
                    failures.append(f"max rel loss diff {diff:.3e} > {rel_tol:g}")
                else:
                    loss_check = "ok"
            diff_s = fmt_float(diff, ".3e")

            have_times = (ms is not None and ref_ms is not None and ref_ms > 0
                          and not math.isnan(ms) and not math.isnan(ref_ms))
            ratio = ms / ref_ms if have_times else None
            ratio_s = f"{ratio:.3f} ({(ratio - 1) * 100:+.1f}%)" if ratio is not None else "n/a"
            if math.isinf(max_overhead):
                time_check = "skip"
            elif ratio is None:
                time_check = "FAIL"
                failures.append("median step time missing")
            elif ratio - 1 > max_overhead:
                time_check = "FAIL"
                failures.append(f"overhead {(ratio - 1) * 100:+.1f}% > {max_overhead * 100:.1f}%")
            else:
                time_check = "ok"

        reserved = run.data.get("peak_reserved_bytes")
        reserved_s = fmt_float(reserved / 2**30 if reserved is not None else None, ".3f")
        rows.append(Row([run.label, str(run.data.get("device", "?")), fmt_float(ms, ".3f"),
                         ratio_s, diff_s, loss_check, time_check, reserved_s], failures))
    return rows


def render(rows: list[Row], markdown: bool) -> str:
    table = [HEADERS] + [r.cells for r in rows]
    if markdown:
        lines = ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in table]
        lines.insert(1, "|" + "|".join("---" for _ in HEADERS) + "|")
        return "\n".join(lines)
    widths = [max(len(row[c]) for row in table) for c in range(len(HEADERS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Compare train_gpt2.py JSON results (losses, median step time, peak "
                    "memory) against the first file.")
    p.add_argument("files", nargs="+", metavar="JSON",
                   help="train_gpt2.py --json outputs; the first is the reference")
    p.add_argument("--rel-tol", type=float, default=1e-4,
                   help="max relative per-step loss difference vs the first file "
                        "(default %(default)g)")
    p.add_argument("--max-overhead", type=float, default=0.03,
                   help="max median step time overhead vs the first file as a fraction; "
                        "'inf' disables the time check (default %(default)g)")
    p.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = p.parse_args(argv)
    if len(args.files) < 2:
        p.error("need at least two JSON files to compare")

    try:
        runs = load_runs(args.files)
    except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE

    rows = compare(runs, args.rel_tol, args.max_overhead)
    print(render(rows, args.markdown))
    print()
    failed = [(r.cells[0], f) for r in rows for f in r.failures]
    if failed:
        for label, why in failed:
            print(f"FAIL {label}: {why}")
        return EXIT_FAIL
    print(f"PASS: {len(rows) - 1} run(s) match {rows[0].cells[0]} "
          f"(rel-tol {args.rel_tol:g}, max-overhead {args.max_overhead:g})")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
