#!/usr/bin/env python3
"""What the link gives deepum's swap path: copies between the GPU and pinned host memory in 64 MiB
calls, both directions at once (one stream each way), as a step under a resident limit moves
evicted memory out while it brings other memory in. Runs natively, with PyTorch.

    pinned_copy_rate.py [--mib 1024] [--rounds 3] [--json PATH]

Prints one line per direction (the best of the rounds) and writes
{"device", "bytes", "h2d_gbps", "d2h_gbps"} to --json. Each direction moves --mib MiB; the GPU
needs twice that free, the host twice that pinned.
"""

from __future__ import annotations

import argparse
import json
import sys

import torch

CHUNK = 64 << 20
GATE_CYCLES = 100_000_000  # ~60 ms: both streams' copies are queued before either starts


def both_ways(mib: int, rounds: int) -> tuple[float, float]:
    """Best GB/s to the GPU and to the host, each timed on the GPU while the other runs."""
    n = mib << 20
    to_gpu_src = torch.ones(n, dtype=torch.uint8, pin_memory=True)
    to_host_dst = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    to_gpu_dst = torch.empty(n, dtype=torch.uint8, device="cuda")
    to_host_src = torch.full((n,), 2, dtype=torch.uint8, device="cuda")
    inbound, outbound = torch.cuda.Stream(), torch.cuda.Stream()
    best_in = best_out = 0.0
    for _ in range(rounds):
        torch.cuda.synchronize()
        start, in_done, out_done = (torch.cuda.Event(enable_timing=True) for _ in range(3))
        if hasattr(torch.cuda, "_sleep"):  # holds both streams back until every copy is queued
            torch.cuda._sleep(GATE_CYCLES)
        start.record()
        inbound.wait_event(start)
        outbound.wait_event(start)
        for offset in range(0, n, CHUNK):
            end = min(offset + CHUNK, n)
            with torch.cuda.stream(inbound):
                to_gpu_dst[offset:end].copy_(to_gpu_src[offset:end], non_blocking=True)
            with torch.cuda.stream(outbound):
                to_host_dst[offset:end].copy_(to_host_src[offset:end], non_blocking=True)
        in_done.record(inbound)
        out_done.record(outbound)
        torch.cuda.synchronize()
        best_in = max(best_in, n / (start.elapsed_time(in_done) * 1e6))
        best_out = max(best_out, n / (start.elapsed_time(out_done) * 1e6))
    return best_in, best_out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mib", type=int, default=1024, help="MiB each way (default %(default)s)")
    p.add_argument("--rounds", type=int, default=3, help="best of this many (default %(default)s)")
    p.add_argument("--json", metavar="PATH", help="write the result as JSON to PATH")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("pinned_copy_rate: no CUDA device for PyTorch", file=sys.stderr)
        return 2
    free, _ = torch.cuda.mem_get_info()
    if (2 * args.mib) << 20 > free // 4:
        print(f"pinned_copy_rate: {args.mib} MiB each way is more than an eighth of the free "
              f"{free >> 20} MiB; ask for less", file=sys.stderr)
        return 2
    h2d, d2h = both_ways(args.mib, args.rounds)
    name = torch.cuda.get_device_name()
    print(f"pinned copies, both ways at once on {name}: to the GPU {h2d:.1f} GB/s, to the host {d2h:.1f} GB/s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"device": name, "bytes": args.mib << 20, "h2d_gbps": h2d, "d2h_gbps": d2h}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
