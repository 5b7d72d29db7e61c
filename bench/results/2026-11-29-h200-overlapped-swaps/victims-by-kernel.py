#!/usr/bin/env python3
"""Sums the engine's victims (V lines) by the kernel whose decision chose them, over one period
of the learned loop, from deepum-sim's stderr under sim-victims.patch (X_FN=1 X_V=1):

    X_FN=1 X_V=1 deepum-sim replay TRACE --oversubscription 2 --policy deepum-swap \\
        --iterations 10 --warmup 4 2> victims.txt > /dev/null
    victims-by-kernel.py victims.txt PERIOD INDEX
"""
import collections
import sys


def main():
    path, period, index = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    names, current, by_kernel = {}, 0, collections.Counter()
    with open(path) as f:
        for line in f:
            if line.startswith("FN "):
                _, function, name = line.rstrip("\n").split(" ", 2)
                names[int(function)] = name.split("(")[0][-90:]
            elif line.startswith("K "):
                current = int(line.split()[2])
            elif line.startswith("V "):
                fields = line.split()
                d = dict(zip(fields[1::2], fields[2::2]))
                if int(d["now"]) // period == index:
                    by_kernel[names.get(current, "a copy" if current == 0 else str(current))] += int(d["bytes"])
    total = sum(by_kernel.values())
    print(f"victims in period {index} ({period} operations): {total / 2**30:.2f} GiB")
    for name, b in by_kernel.most_common(15):
        print(f"{b / 2**30:7.2f} GiB  {name}")


if __name__ == "__main__":
    main()
