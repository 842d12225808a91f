"""The native half of the Python hook: libduethook.so (adapters/c/duet.h built as a shared library).

Python cannot do an atomic fetch-add on a shared mapping, so the barrier wait, the clock readings and
the log lines all happen in C; ctypes releases the GIL for the call, so other threads may run while
this one spins.
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

from duetbench.errors import DuetError

LIBRARY = "libduethook.so"
# Same place and override as the native programs (duetbench.execute.native), without importing the
# execute layer into harness processes.
_PACKAGED = Path(__file__).resolve().parent.parent / "_native"


def library_path() -> Path:
    return Path(os.environ.get("DUETBENCH_NATIVE_DIR") or _PACKAGED) / LIBRARY


def load() -> ctypes.CDLL:
    """Load the library and declare its functions; a clear DuetError when it is missing."""
    path = library_path()
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as exc:
        raise DuetError(
            f"the duet hook cannot load its native library {path}: {exc}",
            hint="reinstall duetbench with a C compiler available (pip install duetbench), "
                 "or point DUETBENCH_NATIVE_DIR at a directory holding libduethook.so",
        ) from None
    lib.duet_set_kind.argtypes = [ctypes.c_int]
    lib.duet_set_kind.restype = None
    for name in ("duet_before_iteration", "duet_after_iteration", "duet_hook_state"):
        getattr(lib, name).argtypes = []
        getattr(lib, name).restype = ctypes.c_int
    for name in ("duet_hook_synced", "duet_hook_iterations"):
        getattr(lib, name).argtypes = []
        getattr(lib, name).restype = ctypes.c_long
    return lib
