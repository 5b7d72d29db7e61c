#!/usr/bin/env python3
"""The decoder's figures in README.md, from two raw files:

NAMINGS: every (operation, 2 MB block) naming of the 1B decoder's trace at 2x, written by
told-the-future.patch's REC (2026-11-28-h200-shape-plan) and sorted by operation.
PROBE (llama-victims-probe.txt.xz, unpacked): one line per victim chosen while the shape-plan
patch's engine replayed that trace at 2x without copies ahead: operation, predicted next use (0:
none), real next naming (0: none), dead (1: in the allocator's cache).

    block-namings.py NAMINGS PROBE
"""
import collections
import sys

uses = collections.defaultdict(list)
for line in open(sys.argv[1]):
    op, block = map(int, line.split())
    uses[block].append(op)
last = max(max(v) for v in uses.values())
period = 2582  # the loop of shapes the replay learned (operations)
for p in (period - 1, period, period + 1):
    hit = total = 0
    for ops in uses.values():
        named = set(ops)
        for u in ops:
            if 5000 < u < last - p:
                total += 1
                hit += (u + p) in named
    print(f"namings repeated {p} operations later: {hit} of {total} ({100 * hit / total:.1f}%)")
often = sum(1 for ops in uses.values() if sum(1 for u in ops if 7000 <= u < 7000 + period) >= 20)
print(f"blocks named 20 times or more in one step: {often} of {len(uses)}")

rows = [tuple(map(int, line.split())) for line in open(sys.argv[2])]
first = min(r[0] for r in rows if r[1] != 0)
predicted = soon = late = 0
predicted_gaps, real_gaps = [], []
for now, pred, real, dead in rows:
    if now < first or dead or pred == 0:
        continue
    predicted += 1
    if real and real - now < 500:
        soon += 1
        late += pred > real
        predicted_gaps.append(pred - now)
        real_gaps.append(real - now)
predicted_gaps.sort()
real_gaps.sort()
print(f"victims chosen by prediction: {predicted}; named again within 500 operations: {soon}")
print(f"  of those, predicted later than named: {late}; operations to the next naming, median: "
      f"predicted {predicted_gaps[soon // 2]}, real {real_gaps[soon // 2]}")
