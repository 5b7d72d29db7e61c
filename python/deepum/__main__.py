"""python -m deepum ARGS...: the installed `deepum` command with the same arguments
(python -m deepum run -- python train.py, python -m deepum --help)."""

from __future__ import annotations

import os
import sys

from ._paths import executable_path


def main() -> int:
    try:
        command = executable_path("deepum")
    except FileNotFoundError as e:
        print(f"python -m deepum: {e}", file=sys.stderr)
        return 2
    try:
        os.execv(command, [command, *sys.argv[1:]])
    except OSError as e:
        print(f"python -m deepum: cannot run {command}: {e}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main())
