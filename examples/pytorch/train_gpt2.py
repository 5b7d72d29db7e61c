#!/usr/bin/env python3
"""GPT-2-style training benchmark for comparing native CUDA runs with deepum.

A plain-PyTorch decoder-only transformer trained on seeded random tokens, so
that two runs (e.g. native and under LD_PRELOAD=libdeepum.so) see exactly the
same data and, in deterministic mode, produce the same per-step losses.

Examples:
    python3 train_gpt2.py --preset gpt2-124m --steps 30 --json native.json
    LD_PRELOAD=/path/to/libdeepum.so python3 train_gpt2.py --json deepum.json
    python3 train_gpt2.py --preset gpt2-1.5b --footprint-only
    python3 train_gpt2.py --preset tiny --device cpu --steps 6

Baselines a user would write by hand at a given GPU memory (no deepum):
    python3 train_gpt2.py --memory-fraction 0.05 --offload save_on_cpu
    python3 train_gpt2.py --memory-fraction 0.05 --offload fsdp2_cpu
--memory-fraction caps PyTorch's caching allocator (torch.cuda.set_per_process_memory_fraction);
--offload save_on_cpu keeps saved activations in pinned host memory
(torch.autograd.graph.save_on_cpu); fsdp2_cpu shards the model with FSDP2 (fully_shard,
CPUOffloadPolicy) in a one-process group, so parameters, gradients and the optimizer live on the
host; fsdp2_cpu_save_on_cpu does both.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import socket
import statistics
import sys
import time
from datetime import datetime, timezone

import torch
import torch.nn as nn
import torch.nn.functional as F

# Model shapes per preset; explicit flags override them.
PRESETS: dict[str, dict[str, int]] = {
    "gpt2-124m": {"n_layer": 12, "n_head": 12, "n_embd": 768},
    "gpt2-350m": {"n_layer": 24, "n_head": 16, "n_embd": 1024},
    "gpt2-774m": {"n_layer": 36, "n_head": 20, "n_embd": 1280},
    "gpt2-1.5b": {"n_layer": 48, "n_head": 25, "n_embd": 1600},
    "tiny": {"n_layer": 2, "n_head": 2, "n_embd": 64, "seq_len": 64, "vocab": 512},
}

DEFAULTS: dict[str, int] = {
    "n_layer": 12,
    "n_head": 12,
    "n_embd": 768,
    "seq_len": 1024,
    "vocab": 50257,
}

FOOTPRINT_STEPS = 2

OFFLOAD_MODES = ("none", "save_on_cpu", "fsdp2_cpu", "fsdp2_cpu_save_on_cpu")


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int, seq_len: int, attention: str) -> None:
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.n_embd = n_embd
        self.attention = attention
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        if attention == "math":
            mask = torch.tril(torch.ones(seq_len, seq_len, dtype=torch.bool))
            # Non-persistent: derived data, not part of the state dict.
            self.register_buffer("causal_mask", mask.view(1, 1, seq_len, seq_len), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = c // self.n_head
        q = q.view(b, t, self.n_head, hs).transpose(1, 2)
        k = k.view(b, t, self.n_head, hs).transpose(1, 2)
        v = v.view(b, t, self.n_head, hs).transpose(1, 2)
        if self.attention == "sdpa":
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            # Materialises the full (b, h, t, t) score matrix: bigger footprint,
            # and only plain matmul/softmax kernels, which are deterministic.
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
            att = att.masked_fill(~self.causal_mask[:, :, :t, :t], float("-inf"))
            att = F.softmax(att, dim=-1)
            y = att @ v
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int, seq_len: int, attention: str) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, seq_len, attention)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab: int, seq_len: int, n_layer: int, n_head: int, n_embd: int,
                 attention: str) -> None:
        super().__init__()
        self.seq_len = seq_len
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(seq_len, n_embd)
        self.h = nn.ModuleList(Block(n_embd, n_head, seq_len, attention) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying, as in GPT-2

        # GPT-2 initialisation; residual projections scaled by depth.
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))
            elif p.dim() >= 2:
                nn.init.normal_(p, mean=0.0, std=0.02)
            elif name.endswith(".bias"):
                nn.init.zeros_(p)
        for m in self.modules():
            if isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        _, t = idx.shape
        if t > self.seq_len:
            raise ValueError(f"sequence length {t} exceeds model seq_len {self.seq_len}")
        pos = torch.arange(t, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        # Loss in fp32 even under bf16 autocast.
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1))


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def deepum_status() -> dict[str, bool]:
    """Whether deepum is requested (LD_PRELOAD) and actually mapped into this process."""
    preload = "libdeepum" in os.environ.get("LD_PRELOAD", "")
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            mapped = any("libdeepum" in line for line in f)
    except OSError:
        mapped = False
    return {"ld_preload": preload, "mapped": mapped}


def configure_determinism(device: torch.device) -> None:
    # cuBLAS reads this when it creates its handle, which happens lazily at
    # the first CUDA matmul, so setting it here (before any CUDA work) is in time.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    if device.type == "cuda" and torch.cuda.is_initialized():
        print("warning: CUDA already initialised; CUBLAS_WORKSPACE_CONFIG may not apply",
              file=sys.stderr)
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    # Newer PyTorch rejects mixing the fp32_precision API with allow_tf32, so
    # use whichever this version offers.
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def make_batch(step: int, seed: int, batch: int, seq_len: int, vocab: int,
               device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    # Generated on CPU from its own seed so the data is identical on every
    # device and independent of any other RNG use.
    g = torch.Generator(device="cpu")
    g.manual_seed(seed + step)
    tokens = torch.randint(0, vocab, (batch, seq_len + 1), generator=g, dtype=torch.long)
    tokens = tokens.to(device)
    return tokens[:, :-1], tokens[:, 1:]


def make_optimizer(model: nn.Module, lr: float) -> torch.optim.Optimizer:
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    groups = [{"params": decay, "weight_decay": 0.1},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def apply_memory_fraction(fraction: float | None, device: torch.device) -> int | None:
    """Caps PyTorch's caching allocator at fraction x the device's memory; returns the cap in bytes."""
    if fraction is None:
        return None
    if device.type != "cuda":
        print(f"warning: --memory-fraction {fraction} ignored on device {device}", file=sys.stderr)
        return None
    torch.cuda.set_per_process_memory_fraction(fraction, device)
    cap = int(fraction * torch.cuda.get_device_properties(device).total_memory)
    print(f"memory cap: fraction {fraction} = {cap} bytes ({cap / 2**30:.3f} GiB)", flush=True)
    return cap


def init_single_process_group(device: torch.device) -> None:
    """A process group of one (world size 1) for FSDP2, from environment variables, in-process."""
    import torch.distributed as dist

    if dist.is_initialized():
        return
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    if "MASTER_PORT" not in os.environ:
        with socket.socket() as s:  # a free port, so that concurrent runs do not collide
            s.bind(("127.0.0.1", 0))
            os.environ["MASTER_PORT"] = str(s.getsockname()[1])
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("LOCAL_RANK", "0")
    backend = "cpu:gloo,cuda:nccl" if device.type == "cuda" else "gloo"
    kwargs = {"device_id": device} if device.type == "cuda" else {}
    dist.init_process_group(backend=backend, init_method="env://", **kwargs)


def shard_fsdp2_cpu(model: "GPT", device: torch.device) -> nn.Module:
    """FSDP2 with CPU offload on one device: each block, then the root (embeddings, tied head)."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import CPUOffloadPolicy, fully_shard

    init_single_process_group(device)
    mesh = init_device_mesh(device.type, (1,))
    policy = CPUOffloadPolicy(pin_memory=device.type == "cuda")
    for block in model.h:
        fully_shard(block, mesh=mesh, offload_policy=policy)
    fully_shard(model, mesh=mesh, offload_policy=policy)
    return model


def offload_context(offload: str, device: torch.device) -> contextlib.AbstractContextManager:
    """save_on_cpu around the forward pass for the modes that offload activations."""
    if offload.endswith("save_on_cpu"):
        return torch.autograd.graph.save_on_cpu(pin_memory=device.type == "cuda")
    return contextlib.nullcontext()


def resolve_shapes(args: argparse.Namespace, presets: dict = PRESETS, defaults: dict = DEFAULTS) -> None:
    """Fill unset shape flags from the preset, then from the defaults."""
    preset = presets.get(args.preset, {}) if args.preset else {}
    for key, default in defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, preset.get(key, default))


def add_run_arguments(p: argparse.ArgumentParser, batch: int, lr: float) -> None:
    """The flags every training example here takes: batch, steps, seed, learning rate, device."""
    p.add_argument("--batch", type=int, default=batch, help="sequences per step (default %(default)s)")
    p.add_argument("--steps", type=int, default=30, help="training steps (default %(default)s)")
    p.add_argument("--warmup-steps", type=int, default=5,
                   help="initial steps excluded from the median step time (default %(default)s)")
    p.add_argument("--seed", type=int, default=1234,
                   help="seed for the weights; step i's batch uses seed+i (default %(default)s)")
    p.add_argument("--lr", type=float, default=lr,
                   help="AdamW learning rate (default %(default)s)")
    p.add_argument("--device", default="cuda",
                   help="torch device, e.g. cuda, cuda:1, cpu (default %(default)s)")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32",
                   help="fp32 (needed for loss comparisons) or bf16 autocast (default %(default)s)")


def add_output_arguments(p: argparse.ArgumentParser) -> None:
    """Determinism and what the run writes: the flags every training example here ends with."""
    p.add_argument("--deterministic", action=argparse.BooleanOptionalAction, default=True,
                   help="deterministic algorithms, no TF32, CUBLAS_WORKSPACE_CONFIG=:4096:8 "
                        "(default on)")
    p.add_argument("--json", metavar="PATH", help="write results as JSON to PATH")
    p.add_argument("--footprint-only", action="store_true",
                   help=f"run {FOOTPRINT_STEPS} steps and print 'footprint_bytes N' "
                        "(peak reserved bytes)")


def parse_run_args(p: argparse.ArgumentParser, argv: list[str] | None, presets: dict,
                   defaults: dict) -> argparse.Namespace:
    """Parse, fill the shapes in, apply --footprint-only, and check what every example needs."""
    args = p.parse_args(argv)
    resolve_shapes(args, presets, defaults)
    if args.footprint_only:
        args.steps = FOOTPRINT_STEPS
        args.warmup_steps = 0
    for key in ("n_layer", "n_head", "n_embd", "seq_len", "vocab", "batch", "steps"):
        if getattr(args, key) <= 0:
            p.error(f"--{key.replace('_', '-')} must be positive")
    if args.warmup_steps < 0:
        p.error("--warmup-steps must be >= 0")
    return args


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Train a GPT-2-style model on seeded random tokens and report "
                    "per-step losses, step times and peak memory.",
    )
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="model shape preset; explicit --n-layer/--n-head/--n-embd/"
                        "--seq-len/--vocab override it")
    p.add_argument("--n-layer", type=int,
                   help=f"transformer blocks (default {DEFAULTS['n_layer']})")
    p.add_argument("--n-head", type=int,
                   help=f"attention heads (default {DEFAULTS['n_head']})")
    p.add_argument("--n-embd", type=int,
                   help=f"embedding width (default {DEFAULTS['n_embd']})")
    p.add_argument("--seq-len", type=int,
                   help=f"sequence length (default {DEFAULTS['seq_len']})")
    p.add_argument("--vocab", type=int,
                   help=f"vocabulary size (default {DEFAULTS['vocab']})")
    add_run_arguments(p, batch=8, lr=3e-4)
    p.add_argument("--attention", choices=["sdpa", "math"], default="sdpa",
                   help="sdpa: F.scaled_dot_product_attention(is_causal=True); "
                        "math: explicit softmax(QK^T)V, larger and deterministic "
                        "(default %(default)s)")
    p.add_argument("--offload", choices=OFFLOAD_MODES, default="none",
                   help="hand-written offloading baseline: save_on_cpu (activations to pinned host "
                        "memory), fsdp2_cpu (FSDP2 fully_shard with CPUOffloadPolicy, world size 1), "
                        "or both (default %(default)s)")
    p.add_argument("--memory-fraction", type=float, metavar="F",
                   help="torch.cuda.set_per_process_memory_fraction(F) before the model is built")
    add_output_arguments(p)
    args = parse_run_args(p, argv, PRESETS, DEFAULTS)
    if args.memory_fraction is not None and not 0 < args.memory_fraction <= 1:
        p.error("--memory-fraction must be in (0, 1]")
    return args


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# Running and reporting (shared with train_bert.py)
# --------------------------------------------------------------------------

class RunSetup:
    """The device a run trains on, what it is called, and whether deepum is loaded."""

    def __init__(self, device: torch.device, device_name: str, deepum: dict) -> None:
        self.device, self.device_name, self.deepum = device, device_name, deepum

    @staticmethod
    def start(args: argparse.Namespace) -> "RunSetup | None":
        """Selects the device (None, after saying why, if CUDA is asked for and missing)."""
        device = torch.device(args.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            print("error: --device cuda requested but no CUDA device is available "
                  "(use --device cpu for a CPU smoke test)", file=sys.stderr)
            return None

        # Must precede any CUDA work (see configure_determinism).
        if args.deterministic:
            configure_determinism(device)

        deepum = deepum_status()
        if device.type == "cuda":
            if device.index is None:
                device = torch.device("cuda", torch.cuda.current_device())
            torch.cuda.set_device(device)
            device_name = torch.cuda.get_device_name(device)
        else:
            device_name = device.type
        return RunSetup(device, device_name, deepum)


def train_steps(args: argparse.Namespace, model: nn.Module, optimizer: torch.optim.Optimizer,
                device: torch.device, make_batch_fn,
                forward_context=contextlib.nullcontext) -> tuple[list[float], list[float], str | None]:
    """args.steps timed training steps; stops at an out-of-memory error, which it returns."""
    use_bf16 = args.dtype == "bf16"
    losses: list[float] = []
    times_ms: list[float] = []
    error: str | None = None
    for step in range(args.steps):
        try:
            # Host-to-device batch copy is outside the timed region.
            x, y = make_batch_fn(step, args.seed, args.batch, args.seq_len, args.vocab, device)
            sync(device)
            t0 = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=use_bf16), \
                    forward_context():
                loss = model(x, y)
            loss.backward()
            optimizer.step()
            sync(device)
            t1 = time.perf_counter()
        except torch.OutOfMemoryError as exc:
            error = f"out of memory at step {step}: {str(exc).splitlines()[0]}"
            print(f"error: {error}", file=sys.stderr, flush=True)
            break
        loss_value = loss.item()
        step_ms = (t1 - t0) * 1000.0
        losses.append(loss_value)
        times_ms.append(step_ms)
        print(f"step {step} loss {loss_value!r} time_ms {step_ms:.3f}", flush=True)
    return losses, times_ms, error


def report(args: argparse.Namespace, run: RunSetup, losses: list[float], times_ms: list[float],
           error: str | None, n_params: int, json_first: dict | None = None,
           json_after: dict | None = None) -> None:
    """The summary lines, and the --json result (json_first after "args", json_after last)."""
    device, deepum = run.device, run.deepum
    is_cuda = device.type == "cuda"
    first_timed = args.warmup_steps
    if first_timed >= len(times_ms):
        print("warning: no steps after warmup; median uses all steps", file=sys.stderr)
        first_timed = 0
    timed = times_ms[first_timed:]
    median_ms = statistics.median(timed) if timed else float("nan")
    tokens_per_s = args.batch * args.seq_len / (median_ms / 1000.0) if timed else float("nan")
    peak_alloc = torch.cuda.max_memory_allocated(device) if is_cuda else 0
    peak_reserved = torch.cuda.max_memory_reserved(device) if is_cuda else 0

    print(f"summary median_step_ms {median_ms:.3f} (steps {first_timed}..{len(times_ms) - 1})")
    print(f"summary tokens_per_s {tokens_per_s:.1f}")
    print(f"summary peak_allocated_bytes {peak_alloc} ({peak_alloc / 2**30:.3f} GiB)")
    print(f"summary peak_reserved_bytes {peak_reserved} ({peak_reserved / 2**30:.3f} GiB)")
    print(f"summary n_params {n_params}")
    print(f"summary deepum_ld_preload {deepum['ld_preload']} deepum_mapped {deepum['mapped']}")
    if args.footprint_only:
        print(f"footprint_bytes {peak_reserved}")

    if args.json:
        result = {"args": vars(args), **(json_first or {})}
        result.update({
            "completed": error is None,
            "error": error,
            "losses": losses,
            "step_times_ms": times_ms,
            "median_step_ms": median_ms if timed else None,
            "tokens_per_s": tokens_per_s if timed else None,
            "peak_allocated_bytes": peak_alloc,
            "peak_reserved_bytes": peak_reserved,
            "n_params": n_params,
            "device": run.device_name,
            "torch_version": torch.__version__,
            "torch_cuda_version": torch.version.cuda,
            "deepum_loaded": deepum["mapped"],
            "deepum_ld_preload": deepum["ld_preload"],
            "deepum_mapped": deepum["mapped"],
            "timestamp": datetime.now(timezone.utc).isoformat(),
            "hostname": socket.gethostname(),
            **(json_after or {}),
        })
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
            f.write("\n")
        print(f"wrote {args.json}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = RunSetup.start(args)
    if run is None:
        return 2
    device, device_name, deepum = run.device, run.device_name, run.deepum

    print(f"config preset={args.preset} n_layer={args.n_layer} n_head={args.n_head} "
          f"n_embd={args.n_embd} seq_len={args.seq_len} vocab={args.vocab} batch={args.batch} "
          f"steps={args.steps} dtype={args.dtype} attention={args.attention} "
          f"deterministic={args.deterministic}"
          + (f" offload={args.offload}" if args.offload != "none" else "")
          + (f" memory_fraction={args.memory_fraction}" if args.memory_fraction is not None else ""))
    print(f"device {device_name} torch {torch.__version__} "
          f"deepum_ld_preload={deepum['ld_preload']} deepum_mapped={deepum['mapped']}",
          flush=True)

    memory_cap = apply_memory_fraction(args.memory_fraction, device)

    # Built on CPU so the initial weights are the same whatever the device.
    torch.manual_seed(args.seed)
    model = GPT(args.vocab, args.seq_len, args.n_layer, args.n_head, args.n_embd,
                args.attention)
    n_params = sum(p.numel() for p in model.parameters())
    if args.offload.startswith("fsdp2_cpu"):
        model = shard_fsdp2_cpu(model, device)  # parameters stay on the host; no model.to(device)
    else:
        model.to(device)
    model.train()
    optimizer = make_optimizer(model, args.lr)

    losses, times_ms, error = train_steps(args, model, optimizer, device, make_batch,
                                          lambda: offload_context(args.offload, device))

    extra = {"offload": args.offload, "memory_cap_bytes": memory_cap} \
        if args.offload != "none" or memory_cap is not None else {}
    report(args, run, losses, times_ms, error, n_params, json_after=extra)

    if args.offload.startswith("fsdp2_cpu"):
        import torch.distributed as dist

        if dist.is_initialized():
            dist.destroy_process_group()
    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())
