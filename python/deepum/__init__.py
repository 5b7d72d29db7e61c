"""deepum: unmodified CUDA programs, PyTorch training included, with more GPU memory than the card has.

The work is done by libdeepum.so, preloaded into the program; this package finds it and the
installed commands:

    deepum run -- python train.py              # the installed command
    python -m deepum run -- python train.py    # the same, through this package
    LD_PRELOAD=$(python -c "import deepum; print(deepum.library_path())") python train.py
"""

from __future__ import annotations

from ._paths import executable_path, library_path, version

__all__ = ["executable_path", "library_path", "version", "__version__"]
__version__ = version()
