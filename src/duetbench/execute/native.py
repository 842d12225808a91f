"""Where the native executables built at install time live."""
from __future__ import annotations

import os
from pathlib import Path

from duetbench.errors import DuetError

NATIVE_DIR = Path(__file__).resolve().parent.parent / "_native"


def native_binary(name: str) -> Path:
    """Path of a native program shipped with the package (``duet-launch``, ``duet-workload``).

    ``DUETBENCH_NATIVE_DIR`` overrides the location (used when running from a source tree).
    """
    base = Path(os.environ.get("DUETBENCH_NATIVE_DIR", NATIVE_DIR))
    path = base / name
    if not os.access(path, os.X_OK):
        raise DuetError(
            f"the native program {name} is missing from {base}",
            hint="reinstall duetbench with a C compiler available (pip install . from the source tree)",
        )
    return path
