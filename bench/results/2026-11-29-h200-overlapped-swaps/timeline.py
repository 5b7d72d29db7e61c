#!/usr/bin/env python3
"""Reads the `XDBG <us> <what> <n>` lines the timeline patches print (X_DBG=1) from a run's stderr
or log and prints, from operation FROM on: where the program's thread and the eviction thread spent
their time, each eviction's phases, and the first LINES events (times in ms from operation FROM).

    timeline.py LOG FROM [LINES]
"""
import sys

PAIRS = [  # (start, end, whose)
    ("wait_issued_begin", "wait_issued_end", "program: waiting for the eviction thread to issue"),
    ("place_begin", "place_end", "program: placements for the operation"),
    ("ahead_place_begin", "ahead_place_end", "program: placements ahead"),
    ("ahead_place_end", "ahead_copyback_end", "program: copy-back calls ahead"),
    ("issue_begin", "copy_calls_returned", "eviction thread: copy calls"),
    ("copy_calls_returned", "copies_ended", "eviction thread: waiting for the copies"),
    ("copies_ended", "drop_call_returned", "eviction thread: the drop call"),
    ("issue_begin", "issued", "eviction thread: issuing, in all"),
]


def main():
    path, first = sys.argv[1], int(sys.argv[2])
    lines = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 4 and parts[0] == "XDBG":
                events.append((int(parts[1]), parts[2], int(parts[3])))
    start = next(t for t, what, n in events if what == "op" and n == first)
    end = next(t for t, what, n in reversed(events) if what == "op")
    window = [e for e in events if start <= e[0] <= end]
    print(f"from operation {first}: {(end - start) / 1e3:.1f} ms")
    for a, b, whose in PAIRS:
        total, count, opened = 0, 0, None
        for t, what, _ in window:
            if what == a:
                opened = t
            elif what == b and opened is not None:
                total, count, opened = total + t - opened, count + 1, None
        print(f"  {whose:<52} {total / 1e3:9.1f} ms in {count}")
    blocks = sum(n for _, what, n in window if what == "copy_calls_returned")
    print(f"  blocks copied out by swaps begun after it: {blocks} ({blocks * 2 / 1024:.1f} GiB)")
    for t, what, n in window[:lines]:
        print(f"{(t - start) / 1e3:9.2f} {what:<22} {n}")


if __name__ == "__main__":
    main()
