"""A standard stream that can no longer be written to (its reader gone, a full disk, `> /dev/full`) is
pointed at /dev/null before the program ends, so that what is printed until the exit, and the
interpreter's last flush, do not fail once more. One place for the three ends that need it: the fast
paths of cli/program.py, the guarded streams of report/safe_text.py and the report's console
(report/console.py). Imports only os: the fast paths use it before anything else is imported."""
from __future__ import annotations

import os

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see cli/program.py
if TYPE_CHECKING:
    from typing import IO, Any


def discard_further_output(stream: IO[Any]) -> None:
    """Point `stream`'s file descriptor at /dev/null; nothing where it has none (closed, or replaced by
    an object without one)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    finally:
        os.close(devnull)
