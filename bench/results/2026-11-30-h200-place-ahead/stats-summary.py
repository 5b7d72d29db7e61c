"""stats-summary.py LOGS.tar.gz...: from the zoo's deepum statistics in each archive, per run: bytes
placed at launches and ahead, copied back at launches and ahead, discarded and swapped out over the
run, and the program's thread's time in placements."""
import json
import sys
import tarfile

G = 2**30
for archive in sys.argv[1:]:
    with tarfile.open(archive) as tar:
        for member in sorted(tar.getmembers(), key=lambda m: m.name):
            if not member.name.endswith(".stats.json"):
                continue
            s = json.load(tar.extractfile(member))
            m, p = s["engine"]["moves"], s["program_thread"]
            print(f"{member.name.split('/')[-1]:38s} placed {m['placed_bytes'] / G:6.1f} "
                  f"ahead {m.get('placed_ahead_bytes', 0) / G:5.1f} GiB | copied back {m['restored_bytes'] / G:6.1f} "
                  f"ahead {m['restored_ahead_bytes'] / G:6.1f} | discarded {m['discarded_bytes'] / G:6.1f} "
                  f"swapped out {m['swapped_out_bytes'] / G:6.1f} | thread in placements "
                  f"{p['move_calls_ns'].get('placements', 0) / 1e9:5.2f} s")
