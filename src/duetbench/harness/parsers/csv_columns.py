"""A CSV table the user describes: which column holds the value, and optionally start, end, name, warmup.

When ``start`` is given without ``end``, each iteration is taken to end ``value`` after its start (the value
is then a duration). The first line is the header; blank lines are skipped.
"""
from __future__ import annotations

import csv
import io
import math

from pydantic import field_validator, model_validator

from ...errors import DuetError
from .._common import SECONDS_PER_UNIT, pick_file, read_text, timestamp_ns, truthy
from ..model import Iteration, ParseResult, ParserInput
from ._timed import TimedOptions


class Options(TimedOptions):
    file: str | None = None
    """Name of the declared result file; default: the only declared file."""
    value: str
    """Column holding the measured value (lower is better), in ``unit``."""
    start: str | None = None
    end: str | None = None
    name: str | None = None
    warmup: str | None = None
    """Column holding a warmup flag: 1/true/yes/w/warmup or 0/false/no/m/measurement/empty."""
    delimiter: str = ","

    @field_validator("delimiter")
    @classmethod
    def _one_char(cls, v: str) -> str:
        if len(v) != 1:
            raise ValueError("delimiter must be exactly one character")
        return v

    @model_validator(mode="after")
    def _end_needs_start(self) -> Options:
        if self.end is not None and self.start is None:
            raise ValueError("option 'end' needs option 'start'")
        return self


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "csv")
    rows = list(csv.reader(io.StringIO(read_text(path)), delimiter=options.delimiter))
    if not rows:
        raise DuetError(f"{path}: empty file, expected a header line")
    header = [h.strip() for h in rows[0]]
    wanted = {k: getattr(options, k) for k in ("value", "start", "end", "name", "warmup")}
    col: dict[str, int] = {}
    for key, column in wanted.items():
        if column is None:
            continue
        if column not in header:
            raise DuetError(f"{path}: no column {column!r} (option {key}); the header has: {', '.join(header)}",
                            hint=f"check the csv option {key!r} and 'delimiter'")
        col[key] = header.index(column)
    factor = SECONDS_PER_UNIT[options.unit]
    iterations: list[Iteration] = []
    per_name: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            raise DuetError(f"{path}:{number}: {len(row)} fields, the header has {len(header)}")

        cells = {key: row[i].strip() for key, i in col.items()}
        cell = cells.__getitem__
        try:
            value = float(cell("value")) * factor
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 0):
            raise DuetError(f"{path}:{number}: column {options.value!r} is {cell('value')!r}, "
                            "not a non-negative number")
        start = end = None
        if "start" in col:
            start = timestamp_ns(cell("start"), options.timestamp_unit)
            if start is None:
                raise DuetError(f"{path}:{number}: column {options.start!r} is {cell('start')!r}, not a number")
            if "end" in col:
                end = timestamp_ns(cell("end"), options.timestamp_unit)
                if end is None:
                    raise DuetError(f"{path}:{number}: column {options.end!r} is {cell('end')!r}, not a number")
                if end < start:
                    raise DuetError(f"{path}:{number}: end {cell('end')} is before start {cell('start')}")
            else:
                end = start + round(value * 1e9)
        warm = False
        if "warmup" in col:
            flag = truthy(cell("warmup"))
            if flag is None:
                raise DuetError(f"{path}:{number}: column {options.warmup!r} is {cell('warmup')!r}, "
                                "not a warmup flag (1/0, true/false, yes/no, w/m)")
            warm = flag
        name = cell("name") if "name" in col else ""
        index = per_name.get(name, 0)
        per_name[name] = index + 1
        iterations.append(Iteration(index, value, start, end, warmup=warm, name=name))
    clock = options.clock if options.start is not None else "none"
    note = "" if options.start is not None else "the csv parser was given no 'start' column"
    return ParseResult(iterations, clock=clock, timestamp_note=note, metadata={"harness": "csv", "source": str(path)})
