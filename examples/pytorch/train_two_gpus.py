#!/usr/bin/env python3
"""One process training a model split across two GPUs (pipeline-style model parallelism): the
first half of a stack of MLP blocks on cuda:0, the second half on cuda:1, the activations handed
over with .to() in the forward pass and the gradients back in the backward pass. AdamW keeps each
half's state on its own device.

    python3 examples/pytorch/train_two_gpus.py --width 2048 --blocks-per-gpu 8 --batch 2048
    LD_PRELOAD=/path/to/libdeepum.so DEEPUM_RESIDENT_LIMIT=2971664384B python3 examples/pytorch/train_two_gpus.py

Prints each step's loss (bit for bit the same in two runs) and time, then each device's peak
reserved by PyTorch and `footprint_bytes`, the larger of the two: with deepum, a resident limit of
half of it oversubscribes each GPU 2x. `--json PATH` writes the losses and the per-device peaks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_gpt2 import configure_determinism  # noqa: E402


class Block(nn.Module):
    """Pre-norm residual MLP block."""

    def __init__(self, width: int):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, 4 * width)
        self.down = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=2048)
    p.add_argument("--blocks-per-gpu", type=int, default=8)
    p.add_argument("--batch", type=int, default=2048, help="rows per step (default %(default)s)")
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--json", type=Path, help="write losses and per-device peaks here")
    return p.parse_args()


def main() -> int:
    args = parse_args()
    if torch.cuda.device_count() < 2:
        print(f"error: {torch.cuda.device_count()} GPU(s); this example needs two", file=sys.stderr)
        return 2
    devices = [torch.device("cuda:0"), torch.device("cuda:1")]
    configure_determinism(devices[0])
    torch.manual_seed(args.seed)
    halves = [
        nn.Sequential(*[Block(args.width) for _ in range(args.blocks_per_gpu)]).to(device) for device in devices
    ]
    optimizers = [torch.optim.AdamW(half.parameters(), lr=args.lr) for half in halves]
    data = torch.Generator(device=devices[0])
    losses: list[float] = []
    for step in range(args.steps):
        data.manual_seed(args.seed + step)
        x = torch.randn(args.batch, args.width, device=devices[0], generator=data)
        target = torch.randn(args.batch, args.width, device=devices[0], generator=data).to(devices[1])
        start = time.perf_counter()
        for optimizer in optimizers:
            optimizer.zero_grad(set_to_none=True)
        out = halves[1](halves[0](x).to(devices[1]))
        loss = nn.functional.mse_loss(out, target)
        loss.backward()
        for optimizer in optimizers:
            optimizer.step()
        value = loss.item()  # waits for both devices: the loss is computed after the last block
        torch.cuda.synchronize(devices[0])
        ms = (time.perf_counter() - start) * 1e3
        losses.append(value)
        print(f"step {step} loss {value!r} time_ms {ms:.3f}", flush=True)
    peaks = [torch.cuda.max_memory_reserved(device) for device in devices]
    for device, peak in zip(devices, peaks):
        print(f"device {device.index} peak_reserved_bytes {peak}")
    print(f"footprint_bytes {max(peaks)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"losses": losses, "peak_reserved_bytes": peaks}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
