#!/usr/bin/env python3
"""step_breakdown.py TRACE.perfetto.json [--last-ms MS] [--stream TRACK]: where a run's GPU time went.

Over the window that ends with the program's last kernel and lasts MS (default: the last 60% of
its kernels' span), from the events deepum writes (docs/trace-format.md):
  kernels busy     union of kernel, copy and memset intervals on the program's streams (--stream,
                   else found by their launches: program_streams)
  other streams    union of the intervals on the rest: deepum's own copies into and out of its swap
                   store and its copy kernels, whose calls it does not trace, and a program's
                   streams that only copy
  waited for launch, waited after launch   summed over the program's kernels whose launch the
                   trace holds (copies and memsets have none): from the end of the work before one
                   in its stream to its launch call, and from the later of the two to its start
                   (an event it waits for: deepum's moves, another stream); summed over streams,
                   so with several they may exceed the window
  H2D / D2H busy   union of the driver's migration intervals each way (CUPTI may drop some D2H
                   records: a lower bound)
  deepum moves     union of the records deepum writes for its own moves ("deepum prefetch done",
                   "deepum eviction done"): estimated intervals, a placement's included, which
                   copies nothing; not link-busy time
  and the overlaps: time the GPU computed nothing while something moved (a migration, or work on
  the other streams), or nothing moved at all (waiting on the host or on an event).
Prints a table; --json adds a JSON line; --top N adds the N kernel names with the most time in the
window, with the GPU page faults reported while one of that name ran.
"""
import argparse
import bisect
import json
import sys


def merged(intervals, lo, hi):
    """The union of the intervals clipped to [lo, hi), as sorted disjoint intervals."""
    out = []
    for start, end in sorted(intervals):
        start, end = max(start, lo), min(end, hi)
        if end <= start:
            continue
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def intersect_length(a, b):
    """Length of the intersection of two sorted disjoint interval lists."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def program_streams(by_stream, forced):
    """The program's streams: those named by --stream, else the stream with the most launches in
    the trace and any other whose launched kernels mostly carry correlation ids it does not share
    with that one (deepum's own copy kernels carry the id of the program's launch they came within,
    or, since that was fixed, none); every stream where the trace holds no launch."""
    if forced:
        return {tid: ops for tid, ops in by_stream.items() if tid in forced}
    ids = {tid: {op[4] for op in ops if op[3] is not None and not op[2].startswith(("memcpy", "memset"))}
           for tid, ops in by_stream.items()}
    main = max(ids, key=lambda tid: len(ids[tid]), default=None)
    if main is None or not ids[main]:
        return dict(by_stream)
    chosen = {main}
    for tid, own in ids.items():
        if tid != main and own and 2 * len(own & ids[main]) < len(own):
            chosen.add(tid)
    return {tid: by_stream[tid] for tid in chosen}


def waits(program, lo, hi):
    """Summed over the program's operations starting in [lo, hi): the time from the end of the work
    before each in its stream to its launch call, and from the later of the two to its start."""
    for_launch = after_launch = 0.0
    for ops in program.values():
        ops = sorted(ops)
        previous_end = None
        for start, end, _, launch, _ in ops:
            if previous_end is not None and launch is not None and lo <= start < hi:
                ready = previous_end
                if launch > ready:
                    for_launch += min(launch, start) - ready
                    ready = launch
                after_launch += max(0.0, start - ready)
            previous_end = end if previous_end is None else max(previous_end, end)
    return for_launch, after_launch


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trace")
    parser.add_argument("--last-ms", type=float, default=None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--top", type=int, default=0)
    parser.add_argument("--stream", action="append", default=[], metavar="TRACK",
                        help="a program's stream by its track's name (\"stream 7\"); repeatable")
    args = parser.parse_args()
    with open(args.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    track_names = {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            track_names[(e["pid"], e["tid"])] = e["args"]["name"]
    # Launch calls by correlation id (ms), deepum's host launches track.
    launched = {e.get("args", {}).get("correlation_id"): float(e["ts"]) / 1000.0 for e in events
                if e.get("ph") == "i" and e.get("pid") == 2 and track_names.get((2, e.get("tid"))) == "host launches"}
    h2d, d2h, own = [], [], []
    by_stream = {}  # tid -> [(start, end, name, launch call or None, correlation id)]
    faults = []  # (time, count)
    for e in events:
        if e.get("ph") == "i" and e.get("pid") == 1 and e.get("name") == "page fault":
            faults.append((float(e["ts"]) / 1000.0, int(e.get("args", {}).get("count", 1))))
        if e.get("ph") != "X" or e.get("pid") != 1:
            continue
        start = float(e["ts"]) / 1000.0  # ms
        end = start + float(e.get("dur", 0)) / 1000.0
        track = track_names.get((1, e["tid"]), "")
        if track in ("H2D migrations", "D2H migrations") and "deepum" in e.get("name", ""):
            own.append((start, end))
        elif track == "H2D migrations":
            h2d.append((start, end))
        elif track == "D2H migrations":
            d2h.append((start, end))
        elif track != "page faults":
            correlation = e.get("args", {}).get("correlation_id")
            by_stream.setdefault(e["tid"], []).append((start, end, e.get("name", ""), launched.get(correlation),
                                                       correlation))
    forced = {tid for (pid, tid), name in track_names.items() if pid == 1 and name in args.stream}
    missing = set(args.stream) - {track_names[(1, tid)] for tid in forced}
    if missing:
        sys.exit(f"step_breakdown.py: no track named {', '.join(sorted(missing))} in {args.trace}")
    program = program_streams(by_stream, forced)
    named_kernels = [op[:3] for ops in program.values() for op in ops]
    kernels = [(start, end) for start, end, _ in named_kernels]
    others = [(op[0], op[1]) for tid, ops in by_stream.items() if tid not in program for op in ops]
    if not kernels:
        sys.exit(f"step_breakdown.py: no kernel, copy or memset on the program's streams in {args.trace}")
    first, last = min(s for s, _ in kernels), max(e for _, e in kernels)
    window = args.last_ms if args.last_ms else 0.6 * (last - first)
    lo, hi = last - window, last
    for_launch, after_launch = waits(program, lo, hi)
    k, up, down = merged(kernels, lo, hi), merged(h2d, lo, hi), merged(d2h, lo, hi)
    ours = merged(own, lo, hi)
    moving = merged([tuple(x) for x in up + down] + others, lo, hi)
    busy_k = sum(e - s for s, e in k)
    busy_up = sum(e - s for s, e in up)
    busy_down = sum(e - s for s, e in down)
    busy_moving = sum(e - s for s, e in moving)
    both = intersect_length(up, down)
    idle_k = window - busy_k
    idle_k_moving = busy_moving - intersect_length(moving, k)
    result = {
        "window_ms": window,
        "kernels_busy_ms": busy_k,
        "other_streams_busy_ms": sum(e - s for s, e in merged(others, lo, hi)),
        "waited_for_launch_ms": for_launch,
        "waited_after_launch_ms": after_launch,
        "h2d_busy_ms": busy_up,
        "d2h_busy_ms": busy_down,
        "h2d_and_d2h_at_once_ms": both,
        "deepum_moves_ms": sum(e - s for s, e in ours),
        "no_kernel_ms": idle_k,
        "no_kernel_while_moving_ms": idle_k_moving,
        "no_kernel_nothing_moving_ms": idle_k - idle_k_moving,
    }
    print(f"window: the last {window:.0f} ms of kernels ({len(kernels)} events on {len(program)} program streams, "
          f"{len(others)} on {len(by_stream) - len(program)} others, {len(h2d)} H2D, {len(d2h)} D2H "
          f"and {len(own)} deepum move events in the trace)")
    print("| measure | ms | % of window |")
    print("|---|---|---|")
    for name, value in result.items():
        if name == "window_ms":
            continue
        print(f"| {name.replace('_ms', '').replace('_', ' ')} | {value:.0f} | {100 * value / window:.0f}% |")
    if args.json:
        print(json.dumps(result))
    if args.top:
        print_top_kernels(named_kernels, faults, lo, hi, args.top)


def print_top_kernels(named_kernels, faults, lo, hi, top):
    """The kernel names with the most busy time in [lo, hi), with the faults reported during them."""
    faults.sort()
    fault_times = [t for t, _ in faults]
    by_name = {}
    for start, end, name in named_kernels:
        if end <= lo or start >= hi:
            continue
        row = by_name.setdefault(name, [0, 0.0, 0.0, 0])  # executions, total ms, longest ms, faults
        row[0] += 1
        row[1] += min(end, hi) - max(start, lo)
        row[2] = max(row[2], end - start)
        first = bisect.bisect_left(fault_times, start)
        last = bisect.bisect_left(fault_times, end)
        row[3] += sum(count for _, count in faults[first:last])
    print(f"| kernel (top {top} by time in the window) | executions | ms | longest ms | faults during |")
    print("|---|---|---|---|---|")
    for name, (count, total, longest, n_faults) in sorted(by_name.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"| {name[:90]} | {count} | {total:.0f} | {longest:.1f} | {n_faults} |")


if __name__ == "__main__":
    main()
