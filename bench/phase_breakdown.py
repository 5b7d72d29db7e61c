#!/usr/bin/env python3
"""phase_breakdown.py TRACE.perfetto.json [--loss-kernel TEXT] [--optimizer-kernel REGEX] [--json]

Where each step of a PyTorch training loop goes, phase by phase, from the trace deepum writes
(trace_file, or `deepum trace convert`; docs/trace-format.md). Kernel names mark the phases: a
forward ends with the loss kernel (default nll_loss_forward, which cross-entropy runs), the
optimizer is the span of the optimizer's kernels (default: foreach, multi-tensor and fused ones),
and the backward lies between the two. Each row runs from one loss kernel to the next: that step's
backward and optimizer, then the next step's forward. Per phase: wall time, the program's kernels'
busy time (the union of their intervals; deepum's own copy kernels, copies and memsets left out),
and the GiB copied to the GPU and to the host (every copy record, deepum's swap copies included).
"""
import argparse
import bisect
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_breakdown import merged  # noqa: E402  (the union of intervals within a window)

OWN_KERNEL = "deepum_copy_within_gpu"


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            events = json.load(f)["traceEvents"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit(f"{path}: not a trace deepum wrote ({type(e).__name__}: {e})")
    # Executions on the GPU: "X" events of the GPU process on its stream tracks (tids past the
    # faults and migrations tracks, docs/trace-format.md).
    gpu = [e for e in events if e.get("ph") == "X" and e.get("pid") == 1 and e.get("tid", 0) >= 10]
    gpu.sort(key=lambda e: e["ts"])
    return gpu


def breakdown(gpu, loss_kernel, optimizer_kernel):
    optimizer = re.compile(optimizer_kernel)
    kernels, losses, optimizer_kernels, copies = [], [], [], []
    for e in gpu:
        name = e["name"]
        if name.startswith("memcpy"):
            copies.append((e["ts"], e["args"].get("kind", ""), e["args"].get("bytes", 0)))
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

    def phase(begin, end):
        return {"ms": (end - begin) / 1e3, "kernels_ms": busy_us(begin, end) / 1e3,
                "to_gpu_gib": moved(begin, end, "HtoD"), "to_host_gib": moved(begin, end, "DtoH")}

    rows = []
    for begin, end in zip(losses, losses[1:]):
        inside = [o for o in optimizer_kernels if begin < o[0] < end]
        if not inside:
            continue  # no optimizer between these two losses (gradient accumulation, evaluation)
        opt_begin, opt_end = inside[0][0], max(o[1] for o in inside)
        rows.append({"step_ms": (end - begin) / 1e3, "backward": phase(begin, opt_begin),
                     "optimizer": phase(opt_begin, opt_end), "forward": phase(opt_end, end)})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace")
    parser.add_argument("--loss-kernel", default="nll_loss_forward",
                        help="text in the name of the kernel that ends a forward")
    parser.add_argument("--optimizer-kernel", default="Foreach|multi_tensor|fused_adam|FusedAdam",
                        help="regular expression matching the optimizer's kernels")
    parser.add_argument("--json", action="store_true", help="the rows as JSON instead of a table")
    args = parser.parse_args()
    rows = breakdown(load(args.trace), args.loss_kernel, args.optimizer_kernel)
    if not rows:
        sys.exit(f"{args.trace}: no loss kernel ({args.loss_kernel}) with an optimizer kernel "
                 f"({args.optimizer_kernel}) before the next one")
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print("each phase: ms, program kernels ms, GiB to the GPU / to the host")
    print(f"{'row':>3} {'loss to loss ms':>15}  {'backward':>26}  {'optimizer':>26}  {'next forward':>26}")
    for i, row in enumerate(rows):
        cells = [f"{p['ms']:7.0f} {p['kernels_ms']:6.0f} {p['to_gpu_gib']:5.1f}/{p['to_host_gib']:4.1f}"
                 for p in (row["backward"], row["optimizer"], row["forward"])]
        print(f"{i:>3} {row['step_ms']:15.0f}  {cells[0]:>26}  {cells[1]:>26}  {cells[2]:>26}")


if __name__ == "__main__":
    main()
