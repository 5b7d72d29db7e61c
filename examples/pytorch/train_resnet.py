#!/usr/bin/env python3
"""ResNet-50 training (torchvision, random init) on seeded random images.

A launch-bound workload at small batch sizes: many short kernels per step, so it
shows what deepum's per-launch tracing costs. Same output and JSON fields as
train_gpt2.py, so bench/compare_runs.py compares its runs too.

    python3 train_resnet.py --batch 16 --steps 30 --json native.json
    LD_PRELOAD=/path/to/libdeepum.so python3 train_resnet.py --json deepum.json
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import sys
import time
from datetime import datetime, timezone

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_gpt2 import configure_determinism, deepum_status, sync  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="resnet50", help="torchvision model name (default %(default)s)")
    p.add_argument("--batch", type=int, default=16, help="images per step (default %(default)s)")
    p.add_argument("--image-size", type=int, default=224, help="image side in pixels (default %(default)s)")
    p.add_argument("--classes", type=int, default=1000, help="output classes (default %(default)s)")
    p.add_argument("--steps", type=int, default=30, help="training steps (default %(default)s)")
    p.add_argument("--warmup-steps", type=int, default=5, help="steps left out of the median (default %(default)s)")
    p.add_argument("--seed", type=int, default=1234, help="seed for weights and data (default %(default)s)")
    p.add_argument("--lr", type=float, default=0.01, help="SGD learning rate (default %(default)s)")
    p.add_argument("--device", default="cuda", help="torch device (default %(default)s)")
    p.add_argument("--deterministic", action=argparse.BooleanOptionalAction, default=True,
                   help="deterministic algorithms, no TF32 (default on)")
    p.add_argument("--json", metavar="PATH", help="write results as JSON to PATH")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    import torchvision  # only needed here; train_gpt2 must not depend on it

    args = parse_args(argv)
    device = torch.device(args.device)
    if args.deterministic:
        configure_determinism(device)
    deepum = deepum_status()
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
    print(f"config model={args.model} batch={args.batch} image_size={args.image_size} steps={args.steps}")
    print(f"device {device_name} torch {torch.__version__} deepum_mapped={deepum['mapped']}", flush=True)

    torch.manual_seed(args.seed)
    model = getattr(torchvision.models, args.model)(weights=None, num_classes=args.classes)
    n_params = sum(p.numel() for p in model.parameters())
    model.to(device).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)

    losses: list[float] = []
    times_ms: list[float] = []
    for step in range(args.steps):
        g = torch.Generator(device="cpu")
        g.manual_seed(args.seed + step)
        images = torch.randn(args.batch, 3, args.image_size, args.image_size, generator=g).to(device)
        labels = torch.randint(0, args.classes, (args.batch,), generator=g).to(device)
        sync(device)
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels)
        loss.backward()
        optimizer.step()
        sync(device)
        t1 = time.perf_counter()
        losses.append(loss.item())
        times_ms.append((t1 - t0) * 1000.0)
        print(f"step {step} loss {losses[-1]!r} time_ms {times_ms[-1]:.3f}", flush=True)

    timed = times_ms[args.warmup_steps:] or times_ms
    median_ms = statistics.median(timed)
    peak_reserved = torch.cuda.max_memory_reserved(device) if device.type == "cuda" else 0
    print(f"summary median_step_ms {median_ms:.3f}")
    print(f"summary peak_reserved_bytes {peak_reserved} ({peak_reserved / 2**30:.3f} GiB)")
    if args.json:
        result = {
            "args": vars(args),
            "completed": True,
            "error": None,
            "losses": losses,
            "step_times_ms": times_ms,
            "median_step_ms": median_ms,
            "images_per_s": args.batch / (median_ms / 1000.0),
            "peak_reserved_bytes": peak_reserved,
            "n_params": n_params,
            "device": device_name,
            "torch_version": torch.__version__,
            "deepum_loaded": deepum["mapped"],
            "timestamp": datetime.now(timezone.utc).isoformat(),
            "hostname": socket.gethostname(),
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
