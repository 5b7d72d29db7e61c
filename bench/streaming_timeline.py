#!/usr/bin/env python3
"""streaming_timeline.py TRACE.perfetto.json[.gz] [--from MS] [--rows N] [--no-h2d]

A run's GPU operations, migrations and deepum's evictions in time order, by managed allocation
(buf0 = the lowest address): what showed that streaming_check's final cudaMemcpy calls faulted
every buffer back onto the GPU with no eviction ordered before them (session 7). Consecutive
migrations of one buffer and kind are merged into one row. Standard library only.
"""
import argparse
import gzip
import json


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        data = json.load(f)
    return data["traceEvents"] if isinstance(data, dict) else data


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--from", dest="start_ms", type=float, default=0.0, help="first ms shown")
    parser.add_argument("--rows", type=int, default=400)
    parser.add_argument("--no-h2d", action="store_true", help="leave host-to-device migrations out")
    args = parser.parse_args()

    events = load(args.trace)
    allocations = sorted(
        (int(e["args"]["address"], 16), e["args"]["bytes"]) for e in events if e.get("name") == "allocate")

    def buffer_of(address):
        for index, (base, size) in enumerate(allocations):
            if base <= address < base + size:
                return f"buf{index}"
        return "-"

    rows = []  # (start us, end us, what, buffer, bytes)
    for e in events:
        name, a = e.get("name", ""), e.get("args", {})
        if name.startswith(("H2D", "D2H")):
            kind = "H2D" if name.startswith("H2D") else name[4:]
            rows.append((e["ts"], e["ts"] + e["dur"], kind, buffer_of(int(a["address"], 16)), a["bytes"]))
        elif name == "evict to host":
            rows.append((e["ts"], e["ts"], "deepum asks eviction", buffer_of(int(a["address"], 16)), a["bytes"]))
        elif name.startswith(("memcpy", "memset")) and e.get("ph") == "X":
            rows.append((e["ts"], e["ts"] + e["dur"], name.split()[0] + " " + name.split()[1], "-", 0))
        elif e.get("ph") == "X" and "correlation_id" in a and "grid" in a:
            rows.append((e["ts"], e["ts"] + e["dur"], "kernel " + name[-24:], "-", 0))
    if not rows:
        raise SystemExit(f"{args.trace}: no migrations, kernels or evictions in this trace")
    rows.sort()
    merged = []  # rows plus a count
    for row in rows:
        last = merged[-1] if merged else None
        if last and last[2] == row[2] and last[3] == row[3] and row[2] in ("H2D", "user"):
            merged[-1] = (last[0], max(last[1], row[1]), last[2], last[3], last[4] + row[4], last[5] + 1)
        else:
            merged.append(row + (1,))
    origin = rows[0][0]
    shown = 0
    print(f"{'from ms':>9} {'to ms':>9} {'what':>34} {'buffer':>6} {'MiB':>8} records")
    for start, end, what, buffer, size, count in merged:
        if (start - origin) / 1000 < args.start_ms or (args.no_h2d and what == "H2D"):
            continue
        print(f"{(start - origin) / 1000:9.3f} {(end - origin) / 1000:9.3f} {what:>34} {buffer:>6} "
              f"{size / 2**20:8.2f} {count}")
        shown += 1
        if shown >= args.rows:
            break


if __name__ == "__main__":
    main()
