#!/usr/bin/env python3
"""bench/thread_time.py on fabricated statistics files (no GPU, standard library only): each column
read from its field, the other move calls summed, a dash where a field is missing, and a clear error
naming a file that is not a statistics file."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "bench" / "thread_time.py"
spec = importlib.util.spec_from_file_location("thread_time", TOOL)
thread_time = importlib.util.module_from_spec(spec)
spec.loader.exec_module(thread_time)
SECOND = 10**9


def stats(with_breakdown: bool) -> dict:
    doc = {"program_thread": {
        "launch_callback": {"p50_ns": 10_200, "p99_ns": 3_145_700},
        "move_calls_ns": {"evictions": SECOND // 10, "discards": SECOND // 20, "prefetches": SECOND // 20,
                          "placements": 2 * SECOND},
        "eviction_thread_waits_ns": SECOND},
        "engine": {"eviction_thread": {"move_calls_ns": 3 * SECOND}}}
    if with_breakdown:
        doc["program_thread"]["placement_copy_calls_ns"] = SECOND // 2
        doc["engine"]["eviction_thread"].update({"copy_calls_ns": SECOND, "drops_ns": 2 * SECOND})
    return doc


class ThreadTime(unittest.TestCase):
    def test_columns_from_their_fields(self):
        self.assertEqual(thread_time.row(stats(True)),
                         ["2.00", "0.50", "1.00", "0.20", "3.00", "1.00", "2.00", "10.2", "3145.7"])

    def test_a_dash_where_a_field_is_missing(self):
        row = thread_time.row(stats(False))
        self.assertEqual(row[1], "-")
        self.assertEqual(row[5:7], ["-", "-"])
        self.assertEqual(thread_time.row({"program_thread": {}}), ["-"] * len(thread_time.COLUMNS))

    def test_the_table_names_each_run(self):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "gpt2-fastest-2x-1.stats.json"
            path.write_text(json.dumps(stats(True)))
            lines = thread_time.table([path]).splitlines()
        self.assertEqual(lines[0].split()[:2], ["run", "placements"])
        self.assertEqual(lines[1].split()[0], "gpt2-fastest-2x-1")

    def test_a_file_that_is_not_statistics_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            bad = Path(d) / "run.log"
            bad.write_text("step 1 loss 2.0\n")
            other = Path(d) / "other.json"
            other.write_text("{}")
            for path, why in ((bad, "not JSON"), (other, "no program_thread")):
                done = subprocess.run([sys.executable, str(TOOL), str(path)], capture_output=True, text=True)
                self.assertEqual(done.returncode, 2)
                self.assertIn(str(path), done.stderr)
                self.assertIn(why, done.stderr)
            missing = subprocess.run([sys.executable, str(TOOL), str(Path(d) / "none.json")],
                                     capture_output=True, text=True)
            self.assertEqual(missing.returncode, 2)
            self.assertIn("no such statistics file", missing.stderr)


if __name__ == "__main__":
    unittest.main()
