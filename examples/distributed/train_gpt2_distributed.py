#!/usr/bin/env python3
"""Data-parallel GPT-2 training over NCCL (DistributedDataParallel, or FSDP2 with --fsdp), for
comparing native runs with deepum on several GPUs.

    torchrun --nproc_per_node=2 examples/distributed/train_gpt2_distributed.py --preset gpt2-350m --batch 4
    LD_PRELOAD=/path/to/libdeepum.so torchrun --nproc_per_node=2 examples/distributed/train_gpt2_distributed.py
    torchrun --nproc_per_node=2 examples/distributed/train_gpt2_distributed.py --fsdp --cpu-offload

--fsdp shards the model with FSDP2 (fully_shard: each block, then the root, whose embedding the head
shares); --cpu-offload adds FSDP2's CPUOffloadPolicy, the hand-written way to fit a model in less
GPU memory (parameters, gradients and the optimizer on the host).

Each rank trains on batches of its own seed; rank 0 prints each step's loss averaged over the ranks,
bit for bit the same in two runs of the same world size, and the samples per second of all ranks.
`footprint_bytes` is the largest rank's peak reserved by PyTorch: with deepum, a resident limit of
half of it oversubscribes each GPU 2x.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pytorch"))
from train_gpt2 import GPT, PRESETS, configure_determinism, make_batch, make_optimizer  # noqa: E402

RANK_SEED_STRIDE = 7919  # a prime: no rank's batches repeat another's


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--preset", choices=sorted(PRESETS), default="gpt2-124m")
    p.add_argument("--batch", type=int, default=8, help="sequences per step on each rank (default %(default)s)")
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--fsdp", action="store_true", help="FSDP2 instead of DistributedDataParallel")
    p.add_argument("--cpu-offload", action="store_true", help="with --fsdp: FSDP2's CPUOffloadPolicy")
    return p.parse_args()


def wrap(model: torch.nn.Module, device: torch.device, args: argparse.Namespace) -> torch.nn.Module:
    """DistributedDataParallel, or FSDP2 over every rank (each block, then the root)."""
    if not args.fsdp:
        return DistributedDataParallel(model, device_ids=[device.index])
    from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard

    policy = {"offload_policy": CPUOffloadPolicy()} if args.cpu_offload else {}
    for block in model.h:
        fully_shard(block, **policy)
    return fully_shard(model, **policy)


def main() -> int:
    args = parse_args()
    if not torch.cuda.is_available():
        print("error: no CUDA device", file=sys.stderr)
        return 2
    configure_determinism(torch.device("cuda"))  # before any CUDA work
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    shape = {k: v for k, v in PRESETS[args.preset].items() if k in ("n_layer", "n_head", "n_embd")}
    model = GPT(args.vocab, args.seq_len, attention="sdpa", **shape).to(device)
    wrapped = wrap(model, device, args)
    optimizer = make_optimizer(wrapped, args.lr)
    for step in range(args.steps):
        x, y = make_batch(step, args.seed + RANK_SEED_STRIDE * rank, args.batch, args.seq_len, args.vocab, device)
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = wrapped(x, y)
        loss.backward()
        optimizer.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        torch.cuda.synchronize(device)
        ms = (time.perf_counter() - start) * 1e3
        if rank == 0:
            print(f"step {step} loss {(mean / world).item()!r} time_ms {ms:.3f} "
                  f"samples_per_s {world * args.batch / ms * 1e3:.2f}", flush=True)
    peaks: list[int] = [0] * world
    dist.all_gather_object(peaks, torch.cuda.max_memory_reserved(device))
    if rank == 0:
        print(f"ranks {world} peak_reserved_bytes {' '.join(map(str, peaks))}")
        print(f"footprint_bytes {max(peaks)}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
