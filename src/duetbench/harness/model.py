"""What every parser produces: iterations with values in seconds and, when known, absolute timestamps."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

Clock = Literal["monotonic", "epoch", "none"]
Kind = Literal["w", "m"]
MetaValue = str | int | float


@dataclass(frozen=True)
class Iteration:
    index: int
    """0-based position within the run, per harness-internal benchmark ``name``; warmups included when known."""
    value_s: float
    """The measured quantity in seconds, lower is better (seconds per operation for throughput modes)."""
    start_ns: int | None = None
    """Absolute start in the domain of ``ParseResult.clock``; None when unknown."""
    end_ns: int | None = None
    warmup: bool = False
    """The harness itself said this was a warmup iteration."""
    name: str = ""
    """Harness-internal benchmark name (one JMH JSON holds several); "" when the output holds one."""
    fork: int = 0
    """Harness-internal process number within the run (JMH fork, pyperf worker); 0 when there is one."""


@dataclass(frozen=True)
class ParseResult:
    iterations: list[Iteration]
    clock: Clock
    """Domain of start_ns/end_ns; "none" means no iteration has timestamps."""
    timestamp_note: str = ""
    """Why there are no timestamps (clock "none") and how to get them; or what a log merge could not do."""
    metadata: dict[str, MetaValue] = field(default_factory=dict)
    benchmarks: tuple[str, ...] = ()
    """The harness-internal benchmark names the output holds, in its order, those without a measured value
    too (no iteration names them); () when the parser does not list them."""


@dataclass(frozen=True)
class LogLine:
    """One line of the iteration log written by our hooks (docs/hooks.md, version 1)."""

    side: str
    index: int
    start_ns: int
    end_ns: int
    kind: Kind | None = None
    value_s: float | None = None
    """The harness's own value for the iteration in seconds per operation (JMH's score), when the hook
    knows it: for fixed-time iterations end − start says nothing about performance."""


#: How much of a captured output file is read at a time by parsers that stream it (`ParserInput.chunks`).
CHUNK_CHARS = 4 * 1024 * 1024


@dataclass(frozen=True)
class ParserInput:
    """What a parser gets. A campaign run's outputs stay in their files (``stdout_path``/``stderr_path``):
    `stdout`/`stderr` read a file whole only when a parser asks for them, and `chunks` streams it, so
    the orchestrator's memory does not grow with a benchmark's output."""

    stdout_text: str = ""
    stderr_text: str = ""
    files: dict[str, Path] = field(default_factory=dict)
    """Declared result files, keyed by the name given in the campaign, valued by the collected copy's path."""
    iteration_log: list[LogLine] = field(default_factory=list)
    """This side's hook log lines; empty when no hook ran."""
    side: str = "A"
    stdout_path: Path | None = None
    stderr_path: Path | None = None

    def __init__(self, stdout: str = "", stderr: str = "", files: dict[str, Path] | None = None,
                 iteration_log: list[LogLine] | None = None, side: str = "A", *, stdout_path: Path | None = None,
                 stderr_path: Path | None = None) -> None:
        for name, value in (("stdout_text", stdout), ("stderr_text", stderr), ("files", files or {}),
                            ("iteration_log", iteration_log or []), ("side", side), ("stdout_path", stdout_path),
                            ("stderr_path", stderr_path)):
            object.__setattr__(self, name, value)

    @property
    def stdout(self) -> str:
        return self._whole("stdout")

    @property
    def stderr(self) -> str:
        return self._whole("stderr")

    def _whole(self, stream: str) -> str:
        path: Path | None = getattr(self, f"{stream}_path")
        if path is None:
            return str(getattr(self, f"{stream}_text"))
        try:
            return path.read_text(errors="replace")
        except OSError:
            return ""

    def lines(self, stream: str) -> Iterator[str]:
        """The stream's lines without their line ends, read one at a time from its file (a parser that
        scans line by line never holds the whole output; `stdout`/`stderr` would)."""
        path: Path | None = getattr(self, f"{stream}_path")
        if path is None:
            yield from str(getattr(self, f"{stream}_text")).splitlines()
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    yield line.rstrip("\r\n")
        except OSError:
            return

    def chunks(self, stream: str) -> Iterator[str]:
        """The stream's text in pieces of about CHUNK_CHARS characters (the whole text when it is in memory)."""
        path: Path | None = getattr(self, f"{stream}_path")
        if path is None:
            yield str(getattr(self, f"{stream}_text"))
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                while piece := f.read(CHUNK_CHARS):
                    yield piece
        except OSError:
            return
