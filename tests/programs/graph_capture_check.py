#!/usr/bin/env python3
"""CUDA graphs under deepum: a training step captured with torch.cuda.graph (global capture mode,
PyTorch's default) and replayed, eager steps around it, and a function compiled with
torch.compile(mode="reduce-overhead"). Prints `result ...` lines that must be the same natively and
under deepum (tests/integration/same_results.sh compares them). Any query or synchronize deepum
made from another thread while a capture ran would invalidate it (PyTorch raises); memory freed
under a graph and handed out again would change the replays' results.

Run it under deepum with a resident limit below what it uses, so that deepum's engine moves memory
around the captures. Exit 0 when it ran, 77 without a GPU.
"""

from __future__ import annotations

import faulthandler
import os
import sys

import torch


def make(seed: int):
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(2048, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 2048)).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return model, optimizer


def batches(count: int):
    g = torch.Generator().manual_seed(99)
    return [(torch.randn(256, 2048, generator=g), torch.randn(256, 2048, generator=g)) for _ in range(count)]


def eager_losses(data) -> list[float]:
    model, optimizer = make(1)
    losses = []
    for x, y in data:
        optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def graphed_losses(data) -> list[float]:
    model, optimizer = make(1)
    static_x = torch.zeros(256, 2048, device="cuda")
    static_y = torch.zeros(256, 2048, device="cuda")
    losses = []
    # Warm-up on a side stream, as PyTorch's documentation asks, with the first batch for real.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x, y = data[0]
        static_x.copy_(x)
        static_y.copy_(y)
        optimizer.zero_grad(set_to_none=False)
        loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    optimizer.zero_grad(set_to_none=False)
    with torch.cuda.graph(graph):  # capture_error_mode="global"
        static_loss = torch.nn.functional.mse_loss(model(static_x), static_y)
        static_loss.backward()
        optimizer.step()
    for x, y in data[1:]:
        static_x.copy_(x)
        static_y.copy_(y)
        graph.replay()
        losses.append(static_loss.item())
    return losses


def compiled_outputs() -> list[float]:
    torch.manual_seed(5)
    w = torch.randn(1024, 1024, device="cuda")

    def f(x):
        return torch.tanh(x @ w).sum(dim=1)

    compiled = torch.compile(f, mode="reduce-overhead")
    xs = [torch.randn(512, 1024, device="cuda") for _ in range(6)]
    return [compiled(x).sum().item() for x in xs]


def main() -> int:
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    if "GRAPH_CHECK_DUMP_AFTER" in os.environ:  # a hang shows every thread's Python stack, then exits
        faulthandler.dump_traceback_later(float(os.environ["GRAPH_CHECK_DUMP_AFTER"]), exit=True)
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    data = batches(8)
    print(f"result eager {eager_losses(data)!r}", flush=True)
    print(f"result graphed {graphed_losses(data)!r}", flush=True)
    print(f"result compiled {compiled_outputs()!r}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
