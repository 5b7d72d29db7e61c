#!/usr/bin/env python3
"""tests/zoo/model_zoo.py's rows on fabricated runs (no GPU, standard library only): the floor at the
slower direction's both-ways rate, the program thread's time in deepum read from a run's statistics
(per launch at the median and p99, in move calls per step), and a dash where a run left none; the
summary's geometric means of x floor and of each build's steps against the first's; every workload
runs the steps asked for, and fewer than two are refused."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ZOO = Path(__file__).resolve().parents[2] / "tests" / "zoo" / "model_zoo.py"
spec = importlib.util.spec_from_file_location("model_zoo", ZOO)
model_zoo = importlib.util.module_from_spec(spec)
sys.modules["model_zoo"] = model_zoo
spec.loader.exec_module(model_zoo)
GIB = 2**30


def run(step_ms: list[float], losses: list[str], footprint: int = 0) -> "model_zoo.Run":
    r = model_zoo.Run([], {}, None, Path("/dev/null"))
    r.steps = [(loss, ms, float(i)) for i, (loss, ms) in enumerate(zip(losses, step_ms))]
    r.footprint, r.exit_code = footprint, 0
    return r


def stats(launch_p50_ns: int, launch_p99_ns: int, move_calls_ns: int) -> dict:
    return {"program_thread": {"launch_callback": {"p50_ns": launch_p50_ns, "p99_ns": launch_p99_ns},
                               "move_calls_ns": {"total": move_calls_ns, "placements": move_calls_ns}}}


class ZooRows(unittest.TestCase):
    def setUp(self) -> None:
        self.native = run([300.0, 100.0, 100.0, 100.0], ["1.0", "0.9", "0.8", "0.7"], footprint=20 * GIB)

    def test_thread_columns_from_the_statistics(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "gpt2-fastest-2x.stats.json"
            path.write_text(json.dumps(stats(10_240, 6_291_456, 2_000_000_000)))
            thread = model_zoo.program_thread(path)
        self.assertEqual(thread, {"launch_p50_us": 10.24, "launch_p99_us": 6291.456, "move_calls_ms": 2000.0})
        deepum = run([900.0, 400.0, 410.0, 420.0], ["1.0", "0.9", "0.8", "0.7"])
        r = model_zoo.row("gpt2", "fastest 2x", deepum, self.native, 50.0, thread)
        self.assertEqual(r["move_calls_ms_per_step"], 500.0)  # 2 s over the run's four steps
        # The floor: 10 GiB each way at 50 GB/s, over the native step.
        self.assertAlmostEqual(r["floor_ms"], 10 * GIB / 50e9 * 1e3)
        self.assertEqual(r["verdict"], "PASS")
        line = model_zoo.format_row(r)
        self.assertEqual(line.split()[-3:], ["10.2", "6291.5", "500.0"])
        self.assertEqual(len(line), len(model_zoo.HEADER))  # each column under its name

    def test_a_dash_where_a_run_left_no_statistics(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            missing = model_zoo.program_thread(Path(d) / "none.stats.json")
            broken = Path(d) / "broken.stats.json"
            broken.write_text("{\"program_thread\": {}}")
            self.assertEqual(model_zoo.program_thread(broken), {})
        self.assertEqual(missing, {})
        differs = run([900.0, 400.0, 410.0, 420.0], ["1.0", "0.9", "0.8", "0.6"])
        r = model_zoo.row("gpt2", "fastest 2x", differs, self.native, 50.0, missing)
        line = model_zoo.format_row(r)
        self.assertEqual(r["verdict"], "FAIL")
        self.assertTrue(line.endswith("-             - losses differ"), line)
        native_line = model_zoo.format_row(model_zoo.row("gpt2", "native", self.native, self.native, 50.0))
        self.assertEqual(native_line.split()[-3:], ["-", "-", "-"])


class ZooSummary(unittest.TestCase):
    def setUp(self) -> None:
        self.native = {"a": run([300.0, 100.0, 100.0], ["1", "2", "3"]), "b": run([300.0, 50.0, 50.0], ["1", "2", "3"])}

    def rows(self, label: str, steps: dict[str, float]) -> list[dict]:
        return [model_zoo.row(w, label, run([900.0, ms, ms], ["1", "2", "3"]), self.native[w], 1e9)
                for w, ms in steps.items()]

    def test_the_geometric_mean_of_x_floor_per_label(self) -> None:
        rows = [model_zoo.row(w, "native", r, r, 1e9) for w, r in self.native.items()]
        rows += self.rows("fastest 2x", {"a": 200.0, "b": 400.0})  # 2x and 8x their native floors
        self.assertEqual(model_zoo.summary(rows),
                         ["fastest 2x: x floor 4.00 (geometric mean over 2 workloads, 2.00-8.00)"])

    def test_each_build_against_the_first_on_the_workloads_both_ran(self) -> None:
        rows = self.rows("fastest 2x [1]", {"a": 200.0, "b": 100.0}) + self.rows("fastest 2x [2]", {"a": 100.0})
        lines = model_zoo.summary(rows)
        self.assertEqual(lines[1], "fastest 2x [2]: x floor 1.00 (geometric mean over 1 workload, 1.00-1.00)")
        self.assertEqual(lines[2], "fastest 2x [2] against [1]: each step 0.500 of [1]'s (geometric mean over "
                                   "1 workload)")
        self.assertEqual(len(lines), 3)  # [1] is not compared with itself

    def test_failed_runs_are_counted(self) -> None:
        differs = run([900.0, 200.0, 200.0], ["1", "2", "4"])
        rows = [model_zoo.row("a", "fastest 2x", differs, self.native["a"], 1e9)]
        self.assertTrue(model_zoo.summary(rows)[0].endswith(", 1 failed"))


class ZooSteps(unittest.TestCase):
    def test_every_workload_runs_the_steps_asked_for(self) -> None:
        for name, cmd in model_zoo.workloads("sweep", 12).items():
            self.assertEqual(cmd[cmd.index("--steps") + 1], "12", name)

    def test_fewer_than_two_steps_are_refused(self) -> None:
        done = subprocess.run([sys.executable, str(ZOO), "--lib", "x.so", "--sweep", "sweep", "--out", "out",
                               "--steps", "1"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("--steps must be at least 2", done.stderr)

    def test_an_unknown_workload_is_refused_by_name(self) -> None:
        done = subprocess.run([sys.executable, str(ZOO), "--lib", "x.so", "--sweep", "sweep", "--out", "out",
                               "--only", "gpt2", "sweep"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 2)
        self.assertIn("no workload named sweep", done.stderr)
        self.assertIn("cuda-sweep", done.stderr)


if __name__ == "__main__":
    unittest.main()
