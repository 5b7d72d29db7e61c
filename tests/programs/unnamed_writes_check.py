#!/usr/bin/env python3
"""Writes deepum cannot see must survive stream_ordered_place_fresh.

A foreach kernel over 48 tensors passes 96 pointers by value, its 48 inputs first; deepum keeps 24
of a launch's pointers, so the outputs it writes go unnamed. Were they still "fresh" (nothing the
program wrote), the first launch naming one would place it on the GPU without its contents. Each
output is then read by a launch of its own and compared with the same sqrt computed on the host.

Run under deepum with a resident limit and stream_ordered_place_fresh (tests/CMakeLists.txt).
Prints 'UNNAMED_WRITES PASS' and exits 0, 'UNNAMED_WRITES FAIL: <why>' and exits 1; 77 without a
CUDA device.
"""

from __future__ import annotations

import sys

import torch

TENSORS = 48
ELEMENTS = 1 << 20  # 4 MiB of fp32: whole 2 MB blocks


def main() -> int:
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    torch.manual_seed(0)
    xs = [torch.rand(ELEMENTS, device="cuda") + 1.0 for _ in range(TENSORS)]
    expected = [torch.sqrt(x.cpu()) for x in xs]
    ys = torch._foreach_sqrt(xs)  # out of place: fresh buffers, written through unnamed pointers
    wrong = []
    for i, y in enumerate(ys):
        # One small launch per output, naming it (as the next layer of a network would).
        got = (y * 1.0).cpu()
        if not torch.allclose(got, expected[i], rtol=1e-6, atol=0.0):
            wrong.append(i)
    if wrong:
        print(f"UNNAMED_WRITES FAIL: {len(wrong)} of {TENSORS} outputs lost what the foreach kernel wrote "
              f"(first: {wrong[:5]})")
        return 1
    print(f"UNNAMED_WRITES PASS: {TENSORS} outputs of a foreach kernel read back intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
