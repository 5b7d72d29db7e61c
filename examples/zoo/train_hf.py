#!/usr/bin/env python3
"""Hugging Face transformers training with random weights and seeded random tokens.

No download: every model is built from a config. Prints one line per step
(`step N loss X time_ms Y`) and, with --json, the losses, step times and the peak
memory PyTorch reserved, like examples/pytorch/train_gpt2.py.

    python3 train_hf.py --model bert-large --batch 16 --seq-len 512 --steps 6
    python3 train_hf.py --model llama-1b --batch 4 --seq-len 512 --json out.json
    python3 train_hf.py --model t5-base --steps 4            # an encoder-decoder
    python3 train_hf.py --model llama-small --dtype bf16 --checkpointing   # as many users train
    python3 train_hf.py --model gpt2 --compile               # torch.compile's Triton kernels
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pytorch"))
from train_gpt2 import configure_determinism, deepum_status, sync  # noqa: E402


def build_model(name: str, vocab: int):
    import transformers as tf

    if name == "bert-large":
        config = tf.BertConfig(vocab_size=vocab, hidden_size=1024, num_hidden_layers=24,
                               num_attention_heads=16, intermediate_size=4096)
        return tf.BertForMaskedLM(config), "mlm"
    if name == "bert-base":
        return tf.BertForMaskedLM(tf.BertConfig(vocab_size=vocab)), "mlm"
    if name == "roberta-base":
        config = tf.RobertaConfig(vocab_size=vocab, max_position_embeddings=1026)
        return tf.RobertaForMaskedLM(config), "mlm"
    if name in ("llama-1b", "llama-small"):
        wide = name == "llama-1b"
        config = tf.LlamaConfig(vocab_size=vocab, hidden_size=2048 if wide else 1024,
                                intermediate_size=5504 if wide else 2752,
                                num_hidden_layers=16 if wide else 8, num_attention_heads=16,
                                num_key_value_heads=16 if wide else 8, max_position_embeddings=4096)
        return tf.LlamaForCausalLM(config), "clm"
    if name == "gpt2":
        return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=vocab)), "clm"
    if name == "t5-base":
        return tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=vocab)), "seq2seq"
    raise SystemExit(f"error: unknown --model {name!r}")


def batch_for(step: int, seed: int, batch: int, seq_len: int, vocab: int, kind: str, device):
    g = torch.Generator(device="cpu")
    g.manual_seed(seed + step)
    tokens = torch.randint(0, vocab, (batch, seq_len), generator=g, dtype=torch.long)
    labels = torch.randint(0, vocab, (batch, seq_len), generator=g, dtype=torch.long)
    inputs = {"input_ids": tokens.to(device), "labels": (tokens if kind == "clm" else labels).to(device)}
    if kind == "seq2seq":
        inputs["decoder_input_ids"] = labels.to(device)
    return inputs


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default="bert-large",
                   help="bert-large, bert-base, roberta-base, llama-1b, llama-small, gpt2, t5-base")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=512)
    p.add_argument("--vocab", type=int, default=30522)
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--warmup-steps", type=int, default=1, help="steps left out of the median")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--deterministic", action=argparse.BooleanOptionalAction, default=True)
    p.add_argument("--adamw", choices=["foreach", "fused"], default="foreach",
                   help="AdamW's implementation: foreach (PyTorch's default on CUDA: several passes over the "
                        "parameters, with temporaries) or fused (one pass, in place)")
    p.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32",
                   help="fp32, or bf16 autocast around the forward and loss (weights and optimizer in fp32)")
    p.add_argument("--checkpointing", action="store_true",
                   help="activation checkpointing (the model's gradient_checkpointing_enable, not reentrant): "
                        "the backward runs each layer's forward again")
    p.add_argument("--compile", action="store_true",
                   help="torch.compile the model (Inductor's Triton kernels instead of PyTorch's own)")
    p.add_argument("--json", metavar="PATH")
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    device = torch.device("cuda")
    if args.deterministic:
        configure_determinism(device)
    torch.manual_seed(args.seed)
    model, kind = build_model(args.model, args.vocab)
    model.to(device).train()
    if args.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    n_params = sum(p.numel() for p in model.parameters())
    impl = {"fused": True} if args.adamw == "fused" else {"foreach": True}
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, **impl)
    forward = torch.compile(model) if args.compile else model
    print(f"config model={args.model} params={n_params} batch={args.batch} seq_len={args.seq_len} "
          f"dtype={args.dtype} checkpointing={args.checkpointing} compile={args.compile} "
          f"deepum_mapped={deepum_status()['mapped']}", flush=True)
    losses, times_ms = [], []
    for step in range(args.steps):
        inputs = batch_for(step, args.seed, args.batch, args.seq_len, args.vocab, kind, device)
        sync(device)
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
            loss = forward(**inputs).loss
        loss.backward()
        optimizer.step()
        sync(device)
        times_ms.append((time.perf_counter() - t0) * 1000.0)
        losses.append(loss.item())
        print(f"step {step} loss {losses[-1]!r} time_ms {times_ms[-1]:.3f}", flush=True)
    timed = times_ms[args.warmup_steps:] or times_ms
    peak_reserved = torch.cuda.max_memory_reserved(device)
    print(f"summary median_step_ms {statistics.median(timed):.3f}")
    print(f"summary peak_reserved_bytes {peak_reserved} ({peak_reserved / 2**30:.3f} GiB)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"args": vars(args), "losses": losses, "step_times_ms": times_ms,
                       "median_step_ms": statistics.median(timed), "peak_reserved_bytes": peak_reserved,
                       "n_params": n_params}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
