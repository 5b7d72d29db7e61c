#!/usr/bin/env python3
"""A CuPy loop over arrays: every step updates each array in turn and reduces it.

The arrays come from CuPy's memory pool (cudaMalloc through the CUDA runtime), so under deepum
they are managed memory; a cyclic sweep like this is what a least-recently-used eviction gets
wrong. Prints `step N loss X time_ms Y` (the loss is a checksum of every array) and
`footprint_bytes N` (the pool's bytes).

    python3 cupy_loop.py --arrays 16 --mib 256 --steps 6
"""

from __future__ import annotations

import argparse
import time

import cupy as cp


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arrays", type=int, default=16)
    p.add_argument("--mib", type=int, default=256, help="MiB per array")
    p.add_argument("--steps", type=int, default=6)
    args = p.parse_args()
    n = args.mib * (1 << 20) // 4
    rng = cp.random.default_rng(1234)
    arrays = [rng.random(n, dtype=cp.float32) for _ in range(args.arrays)]
    cp.cuda.Device().synchronize()
    for step in range(args.steps):
        start = time.perf_counter()
        total = 0.0
        for i, a in enumerate(arrays):
            a *= cp.float32(0.999)
            a += arrays[(i + 1) % len(arrays)][: a.size] * cp.float32(0.001)
            total += float(a.sum(dtype=cp.float64))
        cp.cuda.Device().synchronize()
        print(f"step {step} loss {total!r} time_ms {(time.perf_counter() - start) * 1000:.3f}", flush=True)
    print(f"footprint_bytes {cp.get_default_memory_pool().total_bytes()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
