#!/usr/bin/env python3
"""A JAX training loop: a two-layer MLP on seeded random data, SGD, jit-compiled.

Prints `step N loss X time_ms Y` and `footprint_bytes N` (the device's peak bytes in use, as
XLA's allocator reports it).

    XLA_PYTHON_CLIENT_PREALLOCATE=false python3 jax_loop.py --steps 6

Under deepum, XLA's allocator variables may be left unset: deepum sets TF_FORCE_UNIFIED_MEMORY=1 and
XLA_PYTHON_CLIENT_PREALLOCATE=false at load, so XLA's pool is deepum's managed memory.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--width", type=int, default=8192)
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--steps", type=int, default=6)
    args = p.parse_args()
    key = jax.random.PRNGKey(1234)
    k1, k2, k3, k4 = jax.random.split(key, 4)
    params = {
        "w1": jax.random.normal(k1, (args.width, args.width), jnp.float32) / args.width**0.5,
        "w2": jax.random.normal(k2, (args.width, 1), jnp.float32) / args.width**0.5,
    }
    x = jax.random.normal(k3, (args.batch, args.width), jnp.float32)
    y = jax.random.normal(k4, (args.batch, 1), jnp.float32)

    def loss_fn(p, x, y):
        h = jnp.tanh(x @ p["w1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    @jax.jit
    def step_fn(p, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(p, x, y)
        return jax.tree_util.tree_map(lambda a, g: a - 0.01 * g, p, grads), loss

    for step in range(args.steps):
        start = time.perf_counter()
        params, loss = step_fn(params, x, y)
        loss = float(loss)
        print(f"step {step} loss {loss!r} time_ms {(time.perf_counter() - start) * 1000:.3f}", flush=True)
    stats = jax.devices()[0].memory_stats() or {}
    print(f"footprint_bytes {stats.get('peak_bytes_in_use', 0)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
