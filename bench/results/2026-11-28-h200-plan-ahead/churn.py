"""The thread churn of tests/programs/lifecycle_check.py alone: 400 short-lived threads, 20 at a
time, each filling a 1024x1024 tensor with its number and summing its square. (The count of
"threads wrong" compares float32 sums with exact products, so it counts rounding too: the sum is
the line to compare with a native run.)"""
import sys
import threading

import torch


def work(i: int, results: list) -> None:
    x = torch.full((1024, 1024), float(i), device="cuda")
    results[i] = (x @ x).sum().item()


def main() -> int:
    torch.use_deterministic_algorithms(True)
    torch.backends.cuda.matmul.allow_tf32 = False
    count = 400
    results = [0.0] * count
    for start in range(0, count, 20):
        threads = [threading.Thread(target=work, args=(i, results)) for i in range(start, min(start + 20, count))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    wrong = [i for i in range(count) if results[i] != 1024.0**3 * i * i]
    print(f"result thread churn {sum(results)!r}; {len(wrong)} threads wrong: {wrong[:10]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
