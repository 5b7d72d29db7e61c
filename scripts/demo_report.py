#!/usr/bin/env python3
"""The demo's verdict: a native training run against the same run under deepum at a resident limit
of footprint / R, and the floor that moving the memory allows.

    demo_report.py NATIVE.json DEEPUM.json --ratio R [--link LINK.json] [--stats STATS.json]

NATIVE and DEEPUM are examples/pytorch/train_gpt2.py --json results; LINK is
bench/pinned_copy_rate.py's (pinned copies, both directions at once); STATS is deepum's stats_file.
The floor is max(native step, (F - F/R) / B): F - F/R bytes must leave the GPU and as many come
back every step, at B, the slower direction's rate while both run. Exits 0 when both runs finished,
deepum was loaded and every loss is bit-identical; 1 otherwise, saying why. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

GIB = 2**30


def load(path: str | None) -> dict[str, Any] | None:
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def floor_ms(native_ms: float, footprint: int, ratio: float, link: dict[str, Any] | None) -> tuple[float, str]:
    """The floor and how it was reached, in words."""
    if ratio <= 1:
        return native_ms, "nothing to move"
    rate = min(float(link.get("h2d_gbps") or 0), float(link.get("d2h_gbps") or 0)) if link else 0.0
    if rate <= 0:
        return native_ms, "the native step (no link rate measured)"
    must_move = footprint - footprint / ratio
    move_ms = 1000 * must_move / (rate * 1e9)
    how = f"{must_move / GIB:.2f} GiB each way a step at {rate:.1f} GB/s = {move_ms:.0f} ms"
    return max(native_ms, move_ms), how


def losses_verdict(native: list[float], deepum: list[float]) -> tuple[bool, str]:
    if not native or len(native) != len(deepum):
        return False, f"losses: {len(native)} steps natively, {len(deepum)} under deepum"
    differing = [i for i, (a, b) in enumerate(zip(native, deepum)) if a != b]
    if differing:
        i = differing[0]
        return False, (f"losses DIFFER at {len(differing)} of {len(native)} steps "
                       f"(first: step {i}, {native[i]!r} natively, {deepum[i]!r} under deepum)")
    return True, f"losses: identical, bit for bit, in all {len(native)} steps"


def run_problem(name: str, run: dict[str, Any] | None) -> str | None:
    if run is None:
        return f"the {name} run wrote no result"
    if not run.get("completed") or run.get("median_step_ms") is None:
        return f"the {name} run did not finish: {run.get('error') or 'no step time'}"
    return None


def report(native: dict[str, Any] | None, deepum: dict[str, Any] | None, ratio: float,
           link: dict[str, Any] | None, stats: dict[str, Any] | None) -> tuple[bool, list[str]]:
    problems = [p for p in (run_problem("native", native), run_problem("deepum", deepum)) if p]
    if problems:
        return False, problems
    assert native is not None and deepum is not None
    if not deepum.get("deepum_loaded"):
        return False, ["the deepum run ran without libdeepum.so loaded"]
    footprint = int(native.get("peak_reserved_bytes") or 0)
    native_ms, deepum_ms = float(native["median_step_ms"]), float(deepum["median_step_ms"])
    floor, how = floor_ms(native_ms, footprint, ratio, link)
    limit = footprint / ratio
    lines = [
        f"footprint {footprint / GIB:.2f} GiB (native peak reserved); deepum's resident limit "
        f"{limit / GIB:.2f} GiB: {ratio:g}x oversubscribed",
        f"{'':24}{'step ms':>9}{'x native':>10}",
        f"{'native':24}{native_ms:9.1f}{1:10.2f}",
        f"{f'deepum at {ratio:g}x':24}{deepum_ms:9.1f}{deepum_ms / native_ms:10.2f}"
        f"   ({deepum_ms / floor:.2f}x the floor)",
        f"{'floor':24}{floor:9.1f}{floor / native_ms:10.2f}   max(native, {how})",
    ]
    peak = ((stats or {}).get("tracing") or {}).get("peak_resident_bytes")
    if peak:
        lines.append(f"peak resident under deepum: {peak / GIB:.2f} GiB ({(peak - limit) / limit:+.0%} of the limit)")
    same, verdict = losses_verdict(list(native.get("losses") or []), list(deepum.get("losses") or []))
    lines.append(verdict)
    return same, lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("native")
    p.add_argument("deepum")
    p.add_argument("--ratio", type=float, required=True, help="footprint / resident limit")
    p.add_argument("--link", help="bench/pinned_copy_rate.py --json output")
    p.add_argument("--stats", help="deepum's stats_file")
    args = p.parse_args()
    ok, lines = report(load(args.native), load(args.deepum), args.ratio, load(args.link), load(args.stats))
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
