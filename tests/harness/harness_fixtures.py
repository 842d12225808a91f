"""Helpers of the harness-layer tests: the committed harness outputs (see fixtures/README.md)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from duetbench.harness import LogLine, ParserInput

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture(name: str) -> Path:
    return FIXTURES / name


def inp(*names: str, log: list[LogLine] | None = None, side: str = "A", **streams: Any) -> ParserInput:
    """A ParserInput declaring the named fixture files, keyed by their file names."""
    return ParserInput(stdout=streams.get("stdout", ""), stderr=streams.get("stderr", ""),
                       files={n: fixture(n) for n in names}, iteration_log=log or [], side=side)
