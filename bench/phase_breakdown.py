#!/usr/bin/env python3
"""phase_breakdown.py TRACE.perfetto.json [--loss-kernel TEXT] [--optimizer-kernel REGEX] [--json]
                     [--timeline ROW PHASE] [--bucket-ms MS]

Where each step of a PyTorch training loop goes, phase by phase, from the trace deepum writes
(trace_file, or `deepum trace convert`; docs/trace-format.md). Kernel names mark the phases: a
forward ends with the loss kernel (default nll_loss_forward, which cross-entropy runs), the
optimizer is the span of the optimizer's kernels (default: foreach, multi-tensor and fused ones),
and the backward lies between the two. Each row runs from one loss kernel to the next: that step's
backward and optimizer, then the next step's forward. Per phase: wall time, the program's kernels'
busy time (the union of their intervals; deepum's own copy kernels, copies and memsets left out),
the GiB copied to the GPU and to the host (every copy record, deepum's swap copies included), and
how long those copies kept each direction of the link busy and both at once. Each row ends with a
bound of its phases: each phase at least as long as its kernels and as each direction's copies
(the same bytes moved in the same phase at the rate they ran). A step whose phases each move one
way (the forward out, the backward back) has a bound well above the floor of the zoo's tables,
which takes both directions at once.

--timeline ROW PHASE (backward, optimizer or forward) splits one phase of one row into buckets of
--bucket-ms: the share of each bucket the program's kernels, deepum's copies to the GPU, its copy
kernel and its copies to the host kept busy (each the union of its intervals), the program's
launches and deepum's move markers (evictions, discards, placements) that fell in it on the host.
A link left idle while the kernels wait shows there.
"""
import argparse
import bisect
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_breakdown import intersect_length, merged  # noqa: E402  (interval unions within a window)

OWN_KERNEL = "deepum_copy_within_gpu"


def load_events(path):
    try:
        with open(path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
        if not isinstance(events, list):
            raise TypeError("traceEvents is not a list")
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{path}: not a trace deepum wrote ({type(e).__name__}: {e})")
    return events


def gpu_executions(events):
    # Executions on the GPU: "X" events of the GPU process on its stream tracks (tids past the
    # faults and migrations tracks, docs/trace-format.md).
    gpu = [e for e in events if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10]
    gpu.sort(key=lambda e: e["ts"])
    return gpu


def load(path):
    return gpu_executions(load_events(path))


def breakdown(gpu, loss_kernel, optimizer_kernel):
    optimizer = re.compile(optimizer_kernel)
    kernels, losses, optimizer_kernels, copies = [], [], [], []
    copying = {"HtoD": [], "DtoH": []}  # each direction's copies, as intervals
    for e in gpu:
        name = e["name"]
        if name.startswith("memcpy"):
            kind = e["args"].get("kind", "")
            copies.append((e["ts"], kind, e["args"].get("bytes", 0)))
            if kind in copying:
                copying[kind].append((e["ts"], e["ts"] + e["dur"]))
            continue
        if name.startswith("memset") or name == OWN_KERNEL:
            continue
        kernels.append((e["ts"], e["ts"] + e["dur"]))
        if loss_kernel in name:
            losses.append(e["ts"])
        elif optimizer.search(name):
            optimizer_kernels.append((e["ts"], e["ts"] + e["dur"]))
    copy_times = [c[0] for c in copies]
    kernel_starts = [k[0] for k in kernels]
    longest = max((stop - start for start, stop in kernels), default=0.0)

    def busy_us(begin, end):
        # Only kernels that can reach into the window: starting at most the longest one before it.
        first, last = bisect.bisect_left(kernel_starts, begin - longest), bisect.bisect_left(kernel_starts, end)
        return sum(stop - start for start, stop in merged(kernels[first:last], begin, end))

    def moved(begin, end, kind):
        first, last = bisect.bisect_left(copy_times, begin), bisect.bisect_left(copy_times, end)
        return sum(c[2] for c in copies[first:last] if c[1] == kind) / 2**30

    # Each direction's busy intervals merged once; a phase takes the slice that reaches into it.
    copy_unions = {kind: merged(spans, float("-inf"), float("inf")) for kind, spans in copying.items()}
    union_ends = {kind: [stop for _, stop in union] for kind, union in copy_unions.items()}
    union_starts = {kind: [start for start, _ in union] for kind, union in copy_unions.items()}

    def copying_in(kind, begin, end):
        first = bisect.bisect_right(union_ends[kind], begin)
        last = bisect.bisect_left(union_starts[kind], end)
        return merged(copy_unions[kind][first:last], begin, end)

    def phase(begin, end):
        to_gpu, to_host = copying_in("HtoD", begin, end), copying_in("DtoH", begin, end)
        return {"ms": (end - begin) / 1e3, "kernels_ms": busy_us(begin, end) / 1e3,
                "to_gpu_gib": moved(begin, end, "HtoD"), "to_host_gib": moved(begin, end, "DtoH"),
                "to_gpu_ms": sum(b - a for a, b in to_gpu) / 1e3, "to_host_ms": sum(b - a for a, b in to_host) / 1e3,
                "both_ways_ms": intersect_length(to_gpu, to_host) / 1e3}

    rows = []
    for begin, end in zip(losses, losses[1:]):
        inside = [o for o in optimizer_kernels if begin < o[0] < end]
        if not inside:
            continue  # no optimizer between these two losses (gradient accumulation, evaluation)
        opt_begin, opt_end = inside[0][0], max(o[1] for o in inside)
        phases = {"backward": phase(begin, opt_begin), "optimizer": phase(opt_begin, opt_end),
                  "forward": phase(opt_end, end)}
        bound = sum(max(p["kernels_ms"], p["to_gpu_ms"], p["to_host_ms"]) for p in phases.values())
        rows.append({"step_ms": (end - begin) / 1e3, **phases, "phases_bound_ms": bound,
                     "bounds_us": {"backward": (begin, opt_begin), "optimizer": (opt_begin, opt_end),
                                   "forward": (opt_end, end)}})
    return rows


def timeline(events, begin, end, bucket_ms, gpu=None):
    """Per bucket of [begin, end) (microseconds): busy shares and host-side counts (see the top).
    `gpu`: gpu_executions(events), where the caller has it already."""
    width = bucket_ms * 1e3
    count = max(1, int(-(-(end - begin) // width)))
    if gpu is None:
        gpu = gpu_executions(events)
    # The program's streams run its kernels; deepum's run only copies and its copy kernel.
    program_streams = {e["tid"] for e in gpu
                       if not e["name"].startswith(("memcpy", "memset")) and e["name"] != OWN_KERNEL}
    kinds = {"kernels": [], "to_gpu": [], "copy_kernel": [], "to_host": []}
    for e in gpu:
        if e["ts"] + e["dur"] <= begin or e["ts"] >= end:
            continue
        name = e["name"]
        interval = (e["ts"], e["ts"] + e["dur"])
        if name == OWN_KERNEL:
            kinds["copy_kernel"].append(interval)
        elif name.startswith("memcpy"):
            kind = e.get("args", {}).get("kind", "")
            if e["tid"] in program_streams:
                continue  # the program's own copy
            if kind == "HtoD":
                kinds["to_gpu"].append(interval)
            elif kind == "DtoH":
                kinds["to_host"].append(interval)
        elif not name.startswith("memset"):
            kinds["kernels"].append(interval)
    rows = []
    for i in range(count):
        lo, hi = begin + i * width, min(end, begin + (i + 1) * width)
        row = {"start_ms": i * bucket_ms}
        for kind, intervals in kinds.items():
            busy = sum(b - a for a, b in merged(intervals, lo, hi))
            row[kind + "_pct"] = 100.0 * busy / (hi - lo) if hi > lo else 0.0
        row["launches"] = 0
        row["moves"] = {}
        rows.append(row)
    # The host's tracks (docs/trace-format.md): launches (tid 1), deepum's move markers (tid 2).
    for e in events:
        ts = e.get("ts", -1)
        if e.get("pid") != 2 or e.get("tid") not in (1, 2) or not begin <= ts < end:
            continue
        row = rows[min(count - 1, int((ts - begin) // width))]
        if e["tid"] == 1:
            row["launches"] += 1
        else:
            row["moves"][e["name"]] = row["moves"].get(e["name"], 0) + 1
    return rows


def print_timeline(rows, row_index, phase, bucket_ms):
    print(f"row {row_index}, {phase}, buckets of {bucket_ms:g} ms: % busy (program kernels, deepum's copies to"
          " the GPU, its copy kernel, its copies to the host), launches, deepum's move markers")
    print(f"{'ms':>6} {'kernels':>7} {'to GPU':>6} {'copy k':>6} {'to host':>7} {'launches':>8}  moves")
    for r in rows:
        moves = ", ".join(f"{name} {n}" for name, n in sorted(r["moves"].items()))
        print(f"{r['start_ms']:6g} {r['kernels_pct']:7.0f} {r['to_gpu_pct']:6.0f} {r['copy_kernel_pct']:6.0f} "
              f"{r['to_host_pct']:7.0f} {r['launches']:8d}  {moves}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--loss-kernel", default="nll_loss_forward",
                        help="text in the name of the kernel that ends a forward")
    parser.add_argument("--optimizer-kernel", default="Foreach|multi_tensor|fused_adam|FusedAdam",
                        help="regular expression matching the optimizer's kernels")
    parser.add_argument("--json", action="store_true", help="the rows as JSON instead of a table")
    parser.add_argument("--timeline", nargs=2, metavar=("ROW", "PHASE"),
                        help="one phase (backward, optimizer, forward) of one row in buckets")
    parser.add_argument("--bucket-ms", type=float, default=10.0, help="the timeline's bucket width")
    args = parser.parse_args()
    if args.bucket_ms <= 0:
        parser.error("--bucket-ms must be positive")
    events = load_events(args.trace)
    gpu = gpu_executions(events)
    rows = breakdown(gpu, args.loss_kernel, args.optimizer_kernel)
    if not rows:
        sys.exit(f"{args.trace}: no loss kernel ({args.loss_kernel}) with an optimizer kernel "
                 f"({args.optimizer_kernel}) before the next one")
    if args.timeline:
        row_text, phase = args.timeline
        if not row_text.isdigit() or int(row_text) >= len(rows):
            parser.error(f"--timeline: row {row_text} is not one of 0..{len(rows) - 1}")
        if phase not in ("backward", "optimizer", "forward"):
            parser.error(f"--timeline: phase {phase!r} is not backward, optimizer or forward")
        begin, end = rows[int(row_text)]["bounds_us"][phase]
        buckets = timeline(events, begin, end, args.bucket_ms, gpu)
        if args.json:
            print(json.dumps(buckets, indent=1))
        else:
            print_timeline(buckets, int(row_text), phase, args.bucket_ms)
        return
    for row in rows:
        del row["bounds_us"]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("each phase: ms, program kernels ms, GiB to the GPU / to the host")
    print(f"{'row':>3} {'loss to loss ms':>15}  {'backward':>26}  {'optimizer':>26}  {'next forward':>26}")
    for i, row in enumerate(rows):
        cells = [f"{p['ms']:7.0f} {p['kernels_ms']:6.0f} {p['to_gpu_gib']:5.1f}/{p['to_host_gib']:4.1f}"
                 for p in (row["backward"], row["optimizer"], row["forward"])]
        print(f"{i:>3} {row['step_ms']:15.0f}  {cells[0]:>26}  {cells[1]:>26}  {cells[2]:>26}")
    print("each phase: ms the link was busy to the GPU / to the host / both at once; the phases' bound")
    print(f"{'row':>3} {'loss to loss ms':>15}  {'backward':>20}  {'optimizer':>20}  {'next forward':>20}  {'bound ms':>8}")
    for i, row in enumerate(rows):
        cells = [f"{p['to_gpu_ms']:6.0f}/{p['to_host_ms']:.0f}/{p['both_ways_ms']:.0f}"
                 for p in (row["backward"], row["optimizer"], row["forward"])]
        print(f"{i:>3} {row['step_ms']:15.0f}  {cells[0]:>20}  {cells[1]:>20}  {cells[2]:>20}  "
              f"{row['phases_bound_ms']:8.0f}")


if __name__ == "__main__":
    main()
