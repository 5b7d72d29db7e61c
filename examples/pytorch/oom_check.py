#!/usr/bin/env python3
"""Check that an allocation past deepum's limit raises torch.OutOfMemoryError
and that the process carries on working afterwards.

Run under deepum with the limit it was configured with, e.g.:
    LD_PRELOAD=/path/to/libdeepum.so <deepum limit setting> \\
        python3 oom_check.py --limit-bytes 8589934592 --require-deepum

Prints 'OOM_CHECK PASS' and exits 0, or 'OOM_CHECK FAIL: <why>' and exits 1.
Exits 77 (the conventional 'skipped' code) with no CUDA device.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

EXIT_PASS = 0
EXIT_FAIL = 1
EXIT_SKIP = 77


class CheckFailed(Exception):
    pass


def deepum_status() -> dict[str, bool]:
    """Whether deepum is requested (LD_PRELOAD) and actually mapped into this process."""
    preload = "libdeepum" in os.environ.get("LD_PRELOAD", "")
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            mapped = any("libdeepum" in line for line in f)
    except OSError:
        mapped = False
    return {"ld_preload": preload, "mapped": mapped}


def gib(n: int) -> str:
    return f"{n / 2**30:.3f} GiB"


def check(cond: bool, why: str) -> None:
    if not cond:
        raise CheckFailed(why)


def report_mem_info(stage: str, limit: int) -> tuple[int, int]:
    free, total = torch.cuda.mem_get_info()
    print(f"mem_get_info[{stage}] free={free} ({gib(free)}) total={total} ({gib(total)})")
    # deepum reports total = limit and free = limit - bytes held; natively
    # total is the GPU's size, so total > limit means the limit isn't in force.
    check(total <= limit, f"mem_get_info total {total} exceeds the limit {limit}")
    check(free <= total, f"mem_get_info free {free} exceeds total {total}")
    return free, total


def run_checks(limit: int, require_deepum: bool) -> None:
    deepum = deepum_status()
    print(f"device {torch.cuda.get_device_name()} torch {torch.__version__} "
          f"deepum_ld_preload={deepum['ld_preload']} deepum_mapped={deepum['mapped']}")
    print(f"limit_bytes {limit} ({gib(limit)})")
    if require_deepum:
        check(deepum["mapped"], "libdeepum is not mapped into the process")
    elif not deepum["mapped"]:
        print("warning: libdeepum is not mapped; an OOM here would come from the GPU itself",
              file=sys.stderr)

    # 1. Something small works.
    n = 1 << 20
    a = torch.arange(n, device="cuda", dtype=torch.float64)
    got = a.sum().item()
    want = n * (n - 1) / 2
    check(got == want, f"small sum gave {got}, expected {want}")
    print(f"small tensor ok: sum={got:.0f}")

    report_mem_info("before", limit)

    # 2. The deliberate over-limit allocation must raise OutOfMemoryError.
    over = int(limit * 1.5)
    try:
        big = torch.empty(over, dtype=torch.uint8, device="cuda")
    except torch.OutOfMemoryError as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
        print(f"over-limit allocation of {over} bytes raised OutOfMemoryError: {first_line}")
    else:
        del big
        raise CheckFailed(f"allocating {over} bytes (1.5x the limit) did not raise "
                          "torch.OutOfMemoryError")

    # 3. The process carries on: free the cache, allocate again, compute.
    torch.cuda.empty_cache()
    report_mem_info("after OOM", limit)

    # fp64 so the sum is exact (n * 0.5 < 2**53), and no int64 copy of the
    # buffer is made as an integer sum would.
    moderate = max(limit // 4, 1 << 20) // 8 * 8
    buf = torch.empty(moderate // 8, dtype=torch.float64, device="cuda")
    buf.fill_(0.5)
    buf[-1] = 2.5
    got_sum = buf.sum().item()
    want_sum = 0.5 * buf.numel() + 2.0
    check(got_sum == want_sum, f"sum over {moderate} bytes gave {got_sum}, expected {want_sum}")
    print(f"moderate tensor of {moderate} bytes ({gib(moderate)}) ok: sum={got_sum}")

    # Matmul sized to stay far below the limit (3 fp64 matrices <= limit/16).
    dim = 1024
    while dim > 16 and 3 * dim * dim * 8 > limit // 16:
        dim //= 2
    g = torch.Generator(device="cpu").manual_seed(0)
    x_cpu = torch.randn(dim, dim, generator=g, dtype=torch.float64)
    y_cpu = torch.randn(dim, dim, generator=g, dtype=torch.float64)
    z_gpu = (x_cpu.cuda() @ y_cpu.cuda()).cpu()
    z_cpu = x_cpu @ y_cpu
    max_err = (z_gpu - z_cpu).abs().max().item()
    check(torch.allclose(z_gpu, z_cpu, rtol=1e-9, atol=1e-9),
          f"{dim}x{dim} fp64 matmul differs from CPU by up to {max_err}")
    print(f"matmul {dim}x{dim} fp64 matches CPU (max abs err {max_err:.3e})")

    del buf, a
    torch.cuda.synchronize()
    report_mem_info("end", limit)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description="Check that an allocation past the deepum allocation limit raises "
                    "torch.OutOfMemoryError and that the process keeps working.")
    p.add_argument("--limit-bytes", type=int, required=True,
                   help="the allocation limit deepum was configured with, in bytes")
    p.add_argument("--require-deepum", action="store_true",
                   help="fail unless libdeepum is mapped into the process")
    args = p.parse_args(argv)
    if args.limit_bytes <= 0:
        p.error("--limit-bytes must be positive")

    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return EXIT_SKIP

    try:
        run_checks(args.limit_bytes, args.require_deepum)
    except CheckFailed as exc:
        print(f"OOM_CHECK FAIL: {exc}")
        return EXIT_FAIL
    except Exception as exc:  # noqa: BLE001 - any other error is a failed check too
        first_line = (str(exc).strip().splitlines() or [""])[0]
        print(f"OOM_CHECK FAIL: unexpected {type(exc).__name__}: {first_line}")
        return EXIT_FAIL
    print("OOM_CHECK PASS")
    return EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
