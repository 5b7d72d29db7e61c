#!/usr/bin/env python3
"""thread_time.py STATS.json...: where deepum's threads spent their time in each run, from the
statistics files deepum writes (DEEPUM_STATS_FILE; docs/stats-format.md), one row a file.

  placements   the program's threads in placement calls (fresh blocks placed, swapped ones back)
  copies back  of them, the calls that copy swapped blocks back from the store
  waits        the program's threads waiting for the eviction thread to issue a swap (mostly
               inside the placements)
  other moves  the program's threads in eviction, discard and prefetch calls
  eviction     the eviction thread in its move calls
  copies out   of it, the calls that copy swapped blocks into the store
  drops        of it, the drops after them (the host's waits for the copies and the drop included)
  launch p50 / p99   the program's thread in deepum per launch (bucket bounds)

Times in seconds over the whole run; a dash where a file lacks the field (older builds, or no
engine ran). In the zoo's output the files are logs/<workload>-<mode>[-<lib>].stats.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

COLUMNS = ("placements", "copies back", "waits", "other moves", "eviction", "copies out", "drops",
           "launch p50 us", "p99 us")


def field(doc: dict, path: str):
    """The value at a dotted path, or None where any part is missing."""
    for key in path.split("."):
        if not isinstance(doc, dict) or key not in doc:
            return None
        doc = doc[key]
    return doc


def seconds(ns) -> str:
    return "-" if ns is None else f"{ns / 1e9:.2f}"


def micros(ns) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def row(doc: dict) -> list[str]:
    """The columns for one statistics document."""
    moves = field(doc, "program_thread.move_calls_ns") or {}
    others = [moves.get(k) for k in ("evictions", "discards", "prefetches")]
    other = None if any(v is None for v in others) else sum(others)
    thread = "engine.eviction_thread."
    return [seconds(moves.get("placements")), seconds(field(doc, "program_thread.placement_copy_calls_ns")),
            seconds(field(doc, "program_thread.eviction_thread_waits_ns")), seconds(other),
            seconds(field(doc, thread + "move_calls_ns")), seconds(field(doc, thread + "copy_calls_ns")),
            seconds(field(doc, thread + "drops_ns")), micros(field(doc, "program_thread.launch_callback.p50_ns")),
            micros(field(doc, "program_thread.launch_callback.p99_ns"))]


def load(path: Path) -> dict:
    """A statistics document; ValueError naming the file where it is not one."""
    try:
        doc = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not JSON ({error})") from None
    if not isinstance(doc, dict) or "program_thread" not in doc:
        raise ValueError(f"{path}: not a deepum statistics file (no program_thread)")
    return doc


def table(paths: list[Path]) -> str:
    rows = [["run", *COLUMNS]]
    for path in paths:
        rows.append([path.name.removesuffix(".stats.json"), *row(load(path))])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
                     for r in rows)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    parser.add_argument("stats", nargs="+", type=Path, help="statistics files (DEEPUM_STATS_FILE)")
    args = parser.parse_args(argv)
    for path in args.stats:
        if not path.is_file():
            parser.error(f"{path}: no such statistics file")
    try:
        print(table(args.stats))
    except ValueError as error:
        print(f"thread_time: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
