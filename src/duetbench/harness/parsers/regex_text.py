"""A regular expression over the harness's stdout or stderr, one match per iteration.

The pattern must have a named group ``value``; optional groups ``start`` and ``end`` (timestamps, an end
without a start is refused), ``name`` and ``warmup`` (a flag, as in the csv parser). It is searched with
``re.MULTILINE``, so ``^`` and ``$`` anchor at line boundaries.

The output is searched in chunks (`ParserInput.chunks`), never held whole: a match may span lines and
chunks, as long as it is shorter than `OVERLAP` characters.
"""
from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterator
from typing import Literal

from pydantic import field_validator

from ...errors import DuetError
from .._common import SECONDS_PER_UNIT, timestamp_ns, truthy
from ..model import Iteration, ParseResult, ParserInput
from ._timed import TimedOptions


def _compile(pattern: str) -> re.Pattern[str]:
    """The user's pattern, compiled as today's Python reads it. re's FutureWarnings ("Possible set
    difference" for `[0---9]`) are about a later Python's reading; shown, they were a source line of ours on
    stderr beside the one-line error (bench/fuzz.py)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, re.MULTILINE)


class Options(TimedOptions):
    pattern: str
    stream: Literal["stdout", "stderr"] = "stdout"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            rx = _compile(v)
        except re.error as e:
            raise ValueError(f"invalid regular expression: {e}") from None
        if "value" not in rx.groupindex:
            raise ValueError("the pattern needs a named group (?P<value>...) for the measured value")
        if "end" in rx.groupindex and "start" not in rx.groupindex:
            raise ValueError("a group (?P<end>...) needs a group (?P<start>...)")
        return v


#: Text kept from one chunk to the next: the longest match that may straddle two chunks.
OVERLAP = 64 * 1024


def _matches(rx: re.Pattern[str], chunks: Iterator[str]) -> Iterator[tuple[re.Match[str], int]]:
    """Every match of `rx` over the concatenated chunks, as finditer over the whole text would give them
    (for matches shorter than OVERLAP), each with the number of lines before the text it was found in."""
    buffer = ""
    lines_before = 0
    pending = iter(chunks)
    done = False
    while not done:
        piece = next(pending, None)
        done = piece is None
        buffer += piece or ""
        # A match ending this close to the end could still grow with the next chunk: it waits for it.
        limit = len(buffer) if done else len(buffer) - OVERLAP
        end = 0
        waiting: int | None = None
        for m in rx.finditer(buffer):
            if m.end() > limit:
                waiting = m.start()
                break
            yield m, lines_before
            end = m.end()
        if done:
            return
        # Keep whole lines from the last accepted match, the waiting one, or the overlap on, so that '^'
        # still anchors right.
        target = max(end, len(buffer) - OVERLAP)
        if waiting is not None:
            target = min(target, waiting)
        newline = buffer.rfind("\n", end, target)
        # One line longer than the overlap: cut inside it (bounded memory wins over '^' in such a line).
        cut = newline + 1 if newline >= 0 else target
        lines_before += buffer.count("\n", 0, cut)
        buffer = buffer[cut:]


class _Where:
    """"stdout line N" of a match, counted only when an error needs it (counting for every match of a
    large output would cost more than the search)."""

    def __init__(self, stream: str, m: re.Match[str], lines_before: int) -> None:
        self.stream, self.m, self.lines_before = stream, m, lines_before

    def __str__(self) -> str:
        return f"{self.stream} line {self.lines_before + self.m.string.count(chr(10), 0, self.m.start()) + 1}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _groups(m: re.Match[str], where: _Where | str) -> Callable[[str], str]:
    """Reads a group that must have taken part in the match (optional parts of a pattern may not)."""

    def group(key: str) -> str:
        found = m.group(key)
        if found is None:
            raise DuetError(f"{where}: the match {m.group(0)[:80]!r} has no group {key!r}")
        return found

    return group


def parse(inp: ParserInput, options: Options) -> ParseResult:
    rx = _compile(options.pattern)
    factor = SECONDS_PER_UNIT[options.unit]
    groups = rx.groupindex
    iterations: list[Iteration] = []
    per_name: dict[str, int] = {}
    for m, lines_before in _matches(rx, inp.chunks(options.stream)):
        where = _Where(options.stream, m, lines_before)
        group = _groups(m, where)
        try:
            value = float(group("value")) * factor
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise DuetError(f"{where}: group 'value' is {m.group('value')!r}, not a non-negative number")
        start = end = None
        if "start" in groups:
            start = timestamp_ns(group("start"), options.timestamp_unit)
            end = timestamp_ns(group("end"), options.timestamp_unit) if "end" in groups else None
            if start is None or ("end" in groups and end is None):
                raise DuetError(f"{where}: group 'start' or 'end' in {m.group(0)[:80]!r} is not a number")
            if end is None:
                end = start + round(value * 1e9)
            elif end < start:
                raise DuetError(f"{where}: end is before start in {m.group(0)[:80]!r}")
        warm = False
        if "warmup" in groups and m.group("warmup") is not None:
            flag = truthy(m.group("warmup"))
            if flag is None:
                raise DuetError(f"{where}: group 'warmup' is {m.group('warmup')!r}, not a warmup flag")
            warm = flag
        name = (m.group("name") or "") if "name" in groups else ""
        index = per_name.get(name, 0)
        per_name[name] = index + 1
        iterations.append(Iteration(index, value, start, end, warmup=warm, name=name))
    has_ts = "start" in groups
    return ParseResult(iterations, clock=options.clock if has_ts else "none",
                       timestamp_note="" if has_ts else "the regex has no (?P<start>...) group",
                       metadata={"harness": "regex", "source": options.stream})
