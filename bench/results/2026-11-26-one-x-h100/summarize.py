import json, sys, glob, os
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d.rstrip("/") + "/logs/*.stats.json")):
        s = json.load(open(f)); pt = s["program_thread"]; e = s.get("engine", {}); m = e.get("moves", {})
        lc = pt["launch_callback"]
        print(os.path.basename(f).split(".")[0], "| launch p50/p99 us", lc["p50_ns"] // 1000, lc["p99_ns"] // 1000,
              "n", lc["count"], "total_ms", lc["total_ns"] // 10**6,
              "| prog move ms", {k[:5]: v // 10**6 for k, v in pt["move_calls_ns"].items()},
              "| evict GiB", round(m.get("evicted_bytes", 0) / 2**30, 2), "disc", round(m.get("discarded_bytes", 0) / 2**30, 2),
              "swap", round(m.get("swapped_out_bytes", 0) / 2**30, 2), "placed", round(m.get("placed_bytes", 0) / 2**30, 2),
              "fetched", round(m.get("fetched_bytes", 0) / 2**30, 2), "over", m.get("launches_over_limit"),
              "| faults", s.get("tracing", {}).get("faults"), "| verdict", s.get("verdict", {}).get("cause"))
