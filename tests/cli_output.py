"""Shared by the tests that run `duet` as a program: reading what it printed."""
from __future__ import annotations

import subprocess


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    """The first line of an error on stderr, checked to be there and to be no traceback."""
    lines = [line for line in result.stderr.strip().splitlines() if line.strip()]
    assert lines, "expected an error message on stderr"
    assert "Traceback" not in result.stderr
    return lines[0]
