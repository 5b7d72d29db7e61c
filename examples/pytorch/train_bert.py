#!/usr/bin/env python3
"""BERT-style encoder training benchmark (masked-LM-like loss on seeded random tokens).

A plain-PyTorch bidirectional transformer encoder (post-LayerNorm, as in BERT) with a tied
masked-LM head. Step i masks 15% of its random tokens (from seed+i, on the CPU) and the loss is
the cross-entropy at the masked positions only. Same command-line conventions, printed lines and
--json fields as train_gpt2.py (whose helpers it reuses), so bench/compare_runs.py and the suite
read its runs too.

    python3 train_bert.py --preset bert-base --batch 32 --steps 30 --json native.json
    LD_PRELOAD=/path/to/libdeepum.so python3 train_bert.py --preset bert-large --json deepum.json
    python3 train_bert.py --preset tiny --device cpu --steps 3
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_gpt2 import (MLP, RunSetup, add_output_arguments, add_run_arguments,  # noqa: E402
                        make_optimizer, parse_run_args, report, train_steps)

PRESETS: dict[str, dict[str, int]] = {
    "bert-base": {"n_layer": 12, "n_head": 12, "n_embd": 768},
    "bert-large": {"n_layer": 24, "n_head": 16, "n_embd": 1024},
    "tiny": {"n_layer": 2, "n_head": 2, "n_embd": 64, "seq_len": 64, "vocab": 512},
}

DEFAULTS: dict[str, int] = {
    "n_layer": 12,
    "n_head": 12,
    "n_embd": 768,
    "seq_len": 512,
    "vocab": 30522,
}

MASK_FRACTION = 0.15
IGNORE = -100


# --------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------


class SelfAttention(nn.Module):
    """Bidirectional multi-head self-attention (no mask: every sequence is full length)."""

    def __init__(self, n_embd: int, n_head: int) -> None:
        super().__init__()
        if n_embd % n_head != 0:
            raise ValueError(f"n_embd ({n_embd}) must be divisible by n_head ({n_head})")
        self.n_head = n_head
        self.n_embd = n_embd
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        hs = c // self.n_head
        q, k, v = (z.view(b, t, self.n_head, hs).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class EncoderLayer(nn.Module):
    """BERT's layer: post-LayerNorm residuals around attention and the MLP."""

    def __init__(self, n_embd: int, n_head: int) -> None:
        super().__init__()
        self.attn = SelfAttention(n_embd, n_head)
        self.ln_1 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.ln_1(x + self.attn(x))
        return self.ln_2(x + self.mlp(x))


class Bert(nn.Module):
    def __init__(self, vocab: int, seq_len: int, n_layer: int, n_head: int, n_embd: int) -> None:
        super().__init__()
        self.seq_len = seq_len
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(seq_len, n_embd)
        self.ln_emb = nn.LayerNorm(n_embd)
        self.h = nn.ModuleList(EncoderLayer(n_embd, n_head) for _ in range(n_layer))
        # Masked-LM head: transform, then the decoder tied to the token embedding.
        self.head_dense = nn.Linear(n_embd, n_embd)
        self.head_ln = nn.LayerNorm(n_embd)
        self.decoder = nn.Linear(n_embd, vocab)
        self.decoder.weight = self.wte.weight

        # BERT initialisation: normal(0, 0.02), zero biases, unit LayerNorms.
        for name, p in self.named_parameters():
            if p.dim() >= 2:
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
        x = self.ln_emb(self.wte(idx) + self.wpe(pos))
        for layer in self.h:
            x = layer(x)
        logits = self.decoder(self.head_ln(F.gelu(self.head_dense(x), approximate="tanh")))
        # Loss in fp32 even under bf16 autocast; only the masked positions count.
        return F.cross_entropy(logits.float().view(-1, logits.size(-1)), targets.reshape(-1),
                               ignore_index=IGNORE)


# --------------------------------------------------------------------------
# Data and arguments
# --------------------------------------------------------------------------


def make_batch(step: int, seed: int, batch: int, seq_len: int, vocab: int,
               device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    """Random tokens with MASK_FRACTION of them replaced by the mask token (the last id); the
    targets are the original tokens there and IGNORE elsewhere. On the CPU from seed+step."""
    g = torch.Generator(device="cpu")
    g.manual_seed(seed + step)
    mask_id = vocab - 1
    tokens = torch.randint(0, vocab - 1, (batch, seq_len), generator=g, dtype=torch.long)
    masked = torch.rand(batch, seq_len, generator=g) < MASK_FRACTION
    masked[:, 0] = True  # at least one masked position per sequence, so the loss is defined
    inputs = tokens.masked_fill(masked, mask_id)
    targets = tokens.masked_fill(~masked, IGNORE)
    return inputs.to(device), targets.to(device)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Train a BERT-style encoder with a masked-LM-like loss on seeded random tokens "
                    "and report per-step losses, step times and peak memory.",
    )
    p.add_argument("--preset", choices=sorted(PRESETS),
                   help="model shape preset; explicit --n-layer/--n-head/--n-embd/"
                        "--seq-len/--vocab override it")
    p.add_argument("--n-layer", type=int, help=f"encoder layers (default {DEFAULTS['n_layer']})")
    p.add_argument("--n-head", type=int, help=f"attention heads (default {DEFAULTS['n_head']})")
    p.add_argument("--n-embd", type=int, help=f"hidden width (default {DEFAULTS['n_embd']})")
    p.add_argument("--seq-len", type=int, help=f"sequence length (default {DEFAULTS['seq_len']})")
    p.add_argument("--vocab", type=int, help=f"vocabulary size (default {DEFAULTS['vocab']})")
    add_run_arguments(p, batch=16, lr=1e-4)
    add_output_arguments(p)
    args = parse_run_args(p, argv, PRESETS, DEFAULTS)
    if args.vocab < 2:
        p.error("--vocab must be at least 2 (the last id is the mask token)")
    if args.warmup_steps < 0:
        p.error("--warmup-steps must be >= 0")
    return args


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = RunSetup.start(args)
    if run is None:
        return 2
    device, device_name, deepum = run.device, run.device_name, run.deepum

    print(f"config model=bert preset={args.preset} n_layer={args.n_layer} n_head={args.n_head} "
          f"n_embd={args.n_embd} seq_len={args.seq_len} vocab={args.vocab} batch={args.batch} "
          f"steps={args.steps} dtype={args.dtype} deterministic={args.deterministic}")
    print(f"device {device_name} torch {torch.__version__} "
          f"deepum_ld_preload={deepum['ld_preload']} deepum_mapped={deepum['mapped']}",
          flush=True)

    # Built on CPU so the initial weights are the same whatever the device.
    torch.manual_seed(args.seed)
    model = Bert(args.vocab, args.seq_len, args.n_layer, args.n_head, args.n_embd)
    n_params = sum(p.numel() for p in model.parameters())
    model.to(device)
    model.train()
    optimizer = make_optimizer(model, args.lr)

    losses, times_ms, error = train_steps(args, model, optimizer, device, make_batch)

    report(args, run, losses, times_ms, error, n_params, json_first={"workload": "bert"})

    return 0 if error is None else 1


if __name__ == "__main__":
    sys.exit(main())
