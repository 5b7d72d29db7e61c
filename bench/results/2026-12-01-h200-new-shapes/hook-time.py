"""hook-time.py DIR: per run's statistics in DIR (call 1's logs), the program thread's time in the
launch hook outside the driver's move calls, per launch on average, and the blocks passed over as
victims (engine.moves.spare_victims_skipped_blocks)."""
import json
import pathlib
import sys

for f in sorted(pathlib.Path(sys.argv[1]).glob("*.stats.json")):
    d = json.load(open(f))
    pt, m = d["program_thread"], d["engine"]["moves"]
    outside = pt["launch_callback"]["total_ns"] - pt["move_calls_ns"]["total"]
    n = pt["launch_callback"]["count"]
    print(f"{f.name:45s} launches {n:6d}  outside move calls {outside / 1e9:5.2f} s, {outside / n / 1e3:6.1f} us a launch"
          f"  blocks passed over {m['spare_victims_skipped_blocks']}")
