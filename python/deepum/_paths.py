"""Where pip put deepum's files: the library in the environment's lib/, the commands in its bin/."""

from __future__ import annotations

import os
import shutil
from importlib import metadata
from pathlib import Path

_DIST = "deepum"


def _installed(name: str) -> Path | None:
    """The installed file of this distribution named `name`, if any. Its recorded path is relative
    to site-packages and depends on the install scheme (../../libdeepum.so in a virtual
    environment), so only the name is compared."""
    try:
        files = metadata.files(_DIST) or []
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == name:
            path = Path(str(f.locate())).resolve()
            if path.is_file():
                return path
    return None


def library_path() -> str:
    """libdeepum.so's path: DEEPUM_LIBRARY if set (as the `deepum` command honours it), else the
    installed one. Raises FileNotFoundError saying what is missing."""
    explicit = os.environ.get("DEEPUM_LIBRARY")
    if explicit:
        if not Path(explicit).is_file():
            raise FileNotFoundError(f"DEEPUM_LIBRARY={explicit}: no such file")
        return explicit
    found = _installed("libdeepum.so")
    if found is None:
        raise FileNotFoundError("libdeepum.so is not installed with this package; "
                                "reinstall it (pip install deepum) or set DEEPUM_LIBRARY")
    return str(found)


def executable_path(name: str = "deepum") -> str:
    """The installed command `name` (deepum or deepum-sim), else the one on PATH."""
    found = _installed(name) or shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"the {name} command is not installed with this package nor on PATH")
    return str(found)


def version() -> str:
    try:
        return metadata.version(_DIST)
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"
