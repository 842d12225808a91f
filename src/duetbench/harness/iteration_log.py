"""Reader of the iteration log written by our hooks (docs/hooks.md, "The iteration log, version 1")."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import DuetError
from .model import Kind, LogLine

FORMAT = "SIDE INDEX START_NS END_NS [w|m [VALUE_S]]"


@dataclass(frozen=True)
class IterationLog:
    path: Path
    lines: list[LogLine] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """Things the reader ignored but the user may want to know (a torn last line)."""

    def for_side(self, side: str) -> list[LogLine]:
        return [line for line in self.lines if line.side == side]


#: Timestamps and indexes are stored as signed 64-bit integers; CLOCK_MONOTONIC ns stay far below.
_INT64_END = 2**63


def _nonneg_int(text: str) -> int | None:
    # isdecimal rejects "+5", "-5", " 5" and "1_0", all of which int() would accept.
    if not (text.isascii() and text.isdecimal()):
        return None
    value = int(text)
    return value if value < _INT64_END else None


def parse_line(text: str) -> LogLine | None:
    """The LogLine in ``text`` (without its newline), or None when it is malformed."""
    fields = text.split(" ")
    if len(fields) not in (4, 5, 6) or fields[0] not in ("A", "B"):
        return None
    index, start, end = (_nonneg_int(f) for f in fields[1:4])
    if index is None or start is None or end is None or end < start:
        return None
    kind: Kind | None = None
    if len(fields) >= 5:
        if fields[4] not in ("w", "m"):
            return None
        kind = "w" if fields[4] == "w" else "m"
    value: float | None = None
    if len(fields) == 6:
        try:
            value = float(fields[5])
        except ValueError:
            return None
        if not (math.isfinite(value) and value > 0) or "_" in fields[5]:
            return None
    return LogLine(fields[0], index, start, end, kind, value)


def parse_iteration_log(text: str, path: Path) -> IterationLog:
    """Parse the log's text; ``path`` only names it in messages."""
    lines: list[LogLine] = []
    notes: list[str] = []
    raw = text.split("\n")
    # After the last "\n" split() leaves "" for a terminated file, or the torn tail of an unterminated one.
    tail = raw.pop()
    for number, line in enumerate(raw, start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.startswith("#"):
            continue
        parsed = parse_line(line)
        if parsed is None:
            shown = line if len(line) <= 80 else line[:77] + "..."
            raise DuetError(f"{path}:{number}: malformed iteration-log line {shown!r}, expected '{FORMAT}'",
                            hint="see docs/hooks.md, 'The iteration log, version 1'")
        lines.append(parsed)
    if tail.strip():
        notes.append(f"{path}:{len(raw) + 1}: ignored the unterminated last line {tail[:80]!r} "
                     "(a process was killed while writing it?)")
    return IterationLog(path, lines, notes)


def read_iteration_log(path: Path | str, *, missing_ok: bool = False) -> IterationLog:
    """Read a hook's iteration log. Malformed lines are a DuetError naming file and line; a torn last line a note."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        if missing_ok:
            return IterationLog(path)
        raise DuetError(f"{path}: iteration log not found",
                        hint="did the harness load the duet hook? (docs/hooks.md)") from None
    except OSError as e:
        raise DuetError(f"{path}: cannot read the iteration log: {e.strerror}") from None
    # Undecodable bytes become U+FFFD, which the line check rejects with the line number.
    text = data.decode("ascii", errors="replace")
    return parse_iteration_log(text, path)
