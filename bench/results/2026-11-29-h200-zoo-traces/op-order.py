"""op-order.py OPS.txt PERIOD: how often each step's operations repeat the step before's, by shape.

OPS.txt is the standard error of deepum-sim built with sim-op-dump.patch (one line per operation
the model decides: "K index function grid block" or "C index kind bytes"). Prints, per step of
PERIOD operations, the operations whose shape differs from the one PERIOD earlier, then the first
few differences of step 5.
"""
import collections
import sys

ops = []
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] in ("K", "C"):
        ops.append(tuple([f[0]] + f[2:]))
period = int(sys.argv[2])
differ, total = collections.Counter(), collections.Counter()
for i in range(period, len(ops)):
    total[i // period] += 1
    differ[i // period] += ops[i] != ops[i - period]
print(f"{len(ops)} operations; period {period}: {sum(differ.values()) / sum(total.values()):.1%} differ")
print("step: differing/operations  " + "  ".join(f"{k}: {differ[k]}/{total[k]}" for k in sorted(total)))
for i in [i for i in range(5 * period, 6 * period) if ops[i] != ops[i - period]][:6]:
    print(i, ops[i], "one period earlier:", ops[i - period])
