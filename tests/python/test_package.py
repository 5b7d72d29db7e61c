#!/usr/bin/env python3
"""The `deepum` Python package (python/deepum) against a build tree, without installing it:
library_path() honours DEEPUM_LIBRARY and says what is missing; `python -m deepum` runs the deepum
command with the same arguments and passes its exit status through.

    test_package.py BIN_DIR LIBRARY      (run by ctest as python_package)
"""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
from importlib import metadata
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "python"
BIN_DIR, LIBRARY = sys.argv[1], sys.argv[2]
sys.path.insert(0, str(PACKAGE_ROOT))

import deepum  # noqa: E402  (from the source tree, after the path above)


def installed() -> bool:
    try:
        metadata.distribution("deepum")
        return True
    except metadata.PackageNotFoundError:
        return False


def run_module(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(PACKAGE_ROOT), DEEPUM_LIBRARY=LIBRARY,
               PATH=BIN_DIR + os.pathsep + os.environ.get("PATH", ""))
    return subprocess.run([sys.executable, "-m", "deepum", *args], env=env, capture_output=True, text=True,
                          timeout=60)


class LibraryPath(unittest.TestCase):
    def setUp(self) -> None:
        self.saved = os.environ.pop("DEEPUM_LIBRARY", None)

    def tearDown(self) -> None:
        os.environ.pop("DEEPUM_LIBRARY", None)
        if self.saved is not None:
            os.environ["DEEPUM_LIBRARY"] = self.saved

    def test_honours_deepum_library(self) -> None:
        os.environ["DEEPUM_LIBRARY"] = LIBRARY
        self.assertEqual(deepum.library_path(), LIBRARY)

    def test_a_wrong_deepum_library_is_named(self) -> None:
        os.environ["DEEPUM_LIBRARY"] = "/nonexistent/libdeepum.so"
        with self.assertRaisesRegex(FileNotFoundError, "DEEPUM_LIBRARY=/nonexistent/libdeepum.so"):
            deepum.library_path()

    @unittest.skipIf(installed(), "deepum is installed in this Python: its library would be found")
    def test_not_installed_says_so(self) -> None:
        with self.assertRaisesRegex(FileNotFoundError, "not installed"):
            deepum.library_path()


class Module(unittest.TestCase):
    def test_version_is_the_commands(self) -> None:
        result = run_module("--version")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"^deepum \d+\.\d+\.\d+\n$")

    def test_help(self) -> None:
        result = run_module("--help")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("run a program with libdeepum.so preloaded", result.stdout)

    def test_run_passes_arguments_and_exit_status(self) -> None:
        result = run_module("run", "--", "sh", "-c", 'echo "$LD_PRELOAD $1"; exit 5', "sh", "--flag")
        self.assertEqual(result.returncode, 5, result.stderr)
        self.assertEqual(result.stdout, f"{LIBRARY} --flag\n")

    def test_usage_errors_stay_errors(self) -> None:
        self.assertEqual(run_module("run", "--bogus", "--", "true").returncode, 2)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
