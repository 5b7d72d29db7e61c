#!/usr/bin/env python3
"""errors.py sim-checks.txt: each replayed step against the measured H200 step docs/simulator.md
quotes for it (2026-11-28-h200-traces calls 2 and 4; the CUDA sweep from 2026-11-29-h200-both-ways
call 4, 9d6c65f), and the mean absolute error of base and new over the measured points."""
import re
import sys

MEASURED = {("gpt2", "2x"): 482.4, ("gpt2", "3x"): 609.0, ("resnet", "2x"): 463.7, ("resnet", "3x"): 462.5,
            ("bert-large", "2x"): 909.7, ("bert-large", "3x"): 1179.1, ("llama-1b", "2x"): 1159.4,
            ("llama-1b", "3x"): 1887.7, ("t5-base", "2x"): 514.1, ("densenet201", "2x"): 458.3,
            ("sweep", "2x"): 104.0}
errors = {"base": [], "new": []}
for line in open(sys.argv[1]):
    m = re.match(r"\| (\S+) \| (\dx) \| ([\d.]+) \| ([\d.]+) \|", line)
    if not m or (m.group(1), m.group(2)) not in MEASURED:
        continue
    measured = MEASURED[(m.group(1), m.group(2))]
    base, new = (100 * (float(m.group(i)) / measured - 1) for i in (3, 4))
    errors["base"].append(abs(base))
    errors["new"].append(abs(new))
    print(f"{m.group(1)} {m.group(2)}: measured {measured} ms, base {base:+.1f}%, new {new:+.1f}%")
for name, values in errors.items():
    print(f"{name}: mean absolute error {sum(values) / len(values):.1f}% over {len(values)} points")
