#!/usr/bin/env python3
"""Process lifecycle under deepum: DataLoader workers forked after CUDA is initialised, hundreds of
short-lived threads that each launch kernels, and an exit with work still queued on the GPU.
Prints `result ...` lines that must be the same natively and under deepum
(tests/integration/same_results.sh compares them). Exit 0 when it ran, 77 without a GPU.
"""

from __future__ import annotations

import sys
import threading

import torch


class Numbers(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 64

    def __getitem__(self, index: int) -> torch.Tensor:
        g = torch.Generator().manual_seed(index)
        return torch.randn(4096, generator=g)


def forked_loader(model: torch.nn.Module) -> list[float]:
    # fork: the workers start with the parent's CUDA state (and deepum's) copied, and must neither
    # touch it nor hang on a lock a parent thread held.
    loader = torch.utils.data.DataLoader(Numbers(), batch_size=8, num_workers=2,
                                         multiprocessing_context="fork")
    return [model(batch.cuda()).sum().item() for batch in loader]


def thread_churn(count: int) -> float:
    results = [0.0] * count

    def work(i: int) -> None:
        x = torch.full((1024, 1024), float(i), device="cuda")
        results[i] = (x @ x).sum().item()

    for start in range(0, count, 20):  # 20 at a time, each thread gone before the next batch
        threads = [threading.Thread(target=work, args=(i,)) for i in range(start, min(start + 20, count))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return sum(results)


def main() -> int:
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device")
        return 77
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(3)
    model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.Tanh(), torch.nn.Linear(4096, 256)).cuda()
    print(f"result forked loader {forked_loader(model)!r}", flush=True)
    print(f"result thread churn {thread_churn(400)!r}", flush=True)
    # Work left queued at exit: deepum's exit must neither hang nor lose it.
    x = torch.randn(2048, 2048, device="cuda")
    for _ in range(200):
        x = torch.tanh(x @ x / 2048)
    print(f"result queued at exit {x[0, :4].tolist()!r}", flush=True)
    y = x
    for _ in range(200):
        y = torch.tanh(y @ y / 2048)  # still on the GPU when the interpreter exits
    return 0


if __name__ == "__main__":
    sys.exit(main())
