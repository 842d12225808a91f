"""A regular expression over the harness's stdout or stderr, one match per iteration.

The pattern must have a named group ``value``; optional groups ``start`` and ``end`` (timestamps, an end
without a start is refused), ``name`` and ``warmup`` (a flag, as in the csv parser). It is searched with
``re.MULTILINE``, so ``^`` and ``$`` anchor at line boundaries.
"""
from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Literal

from pydantic import field_validator

from ...errors import DuetError
from .._common import SECONDS_PER_UNIT, timestamp_ns, truthy
from ..model import Iteration, ParseResult, ParserInput
from ._timed import TimedOptions


class Options(TimedOptions):
    pattern: str
    stream: Literal["stdout", "stderr"] = "stdout"

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, v: str) -> str:
        try:
            rx = re.compile(v, re.MULTILINE)
        except re.error as e:
            raise ValueError(f"invalid regular expression: {e}") from None
        if "value" not in rx.groupindex:
            raise ValueError("the pattern needs a named group (?P<value>...) for the measured value")
        if "end" in rx.groupindex and "start" not in rx.groupindex:
            raise ValueError("a group (?P<end>...) needs a group (?P<start>...)")
        return v


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _groups(m: re.Match[str], where: str) -> Callable[[str], str]:
    """Reads a group that must have taken part in the match (optional parts of a pattern may not)."""

    def group(key: str) -> str:
        found = m.group(key)
        if found is None:
            raise DuetError(f"{where}: the match {m.group(0)[:80]!r} has no group {key!r}")
        return found

    return group


def parse(inp: ParserInput, options: Options) -> ParseResult:
    rx = re.compile(options.pattern, re.MULTILINE)
    text: str = getattr(inp, options.stream)
    factor = SECONDS_PER_UNIT[options.unit]
    groups = rx.groupindex
    iterations: list[Iteration] = []
    per_name: dict[str, int] = {}
    for m in rx.finditer(text):
        where = f"{options.stream} line {_line(text, m.start())}"
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
