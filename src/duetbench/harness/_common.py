"""Helpers shared by the parsers: picking a declared file, reading JSON (also gzipped), time units."""
from __future__ import annotations

import gzip
import json
import math
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import DuetError
from .model import ParserInput

# Seconds per unit. Labels are those the harnesses print: JMH's TimeValue labels (ns, us, ms, s, min, hr, day),
# Google Benchmark's time_unit (ns, us, ms, s) and the common spelling "µs".
SECONDS_PER_UNIT: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
    "hr": 3600.0,
    "day": 86400.0,
}


class Options(BaseModel):
    """Base of every parser's options: unknown keys are mistakes, reported with their location."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def fail(where: str, problem: str, hint: str | None = None) -> DuetError:
    return DuetError(f"{where}: {problem}", hint=hint)


def pick_file(inp: ParserInput, wanted: str | None, parser: str) -> Path:
    """The declared result file named ``wanted``, or the only declared file when ``wanted`` is None."""
    if wanted is None:
        if len(inp.files) == 1:
            path = next(iter(inp.files.values()))
        elif not inp.files:
            raise DuetError(f"parser '{parser}': no result file was declared",
                            hint="declare the harness's output file in the benchmark's 'results' list")
        else:
            names = ", ".join(sorted(inp.files))
            raise DuetError(f"parser '{parser}': several result files are declared ({names})",
                            hint="say which one with the parser option 'file'")
    else:
        if wanted not in inp.files:
            names = ", ".join(sorted(inp.files)) or "none"
            raise DuetError(f"parser '{parser}': option file '{wanted}' is not a declared result file "
                            f"(declared: {names})", hint="add it to the benchmark's 'results' or fix the name")
        path = inp.files[wanted]
    if not path.is_file():
        raise DuetError(f"{path}: result file not found (the harness did not write it?)",
                        hint="check the harness command's output option and its stderr")
    return path


def read_text(path: Path) -> str:
    """The file's text; ``.gz`` files are decompressed."""
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                return f.read()
        return path.read_text(encoding="utf-8")
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise DuetError(f"{path}: cannot read: {e}") from None


def load_json(path: Path) -> Any:
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DuetError(f"{path}: not valid JSON (line {e.lineno}, column {e.colno}: {e.msg})",
                        hint="the harness may have been killed while writing it") from None
    except RecursionError:
        raise DuetError(f"{path}: JSON nested too deeply (lists or objects inside each other thousands of times)",
                        hint="no harness writes that; check that this is the right file") from None


def require(cond: bool, path: Path | str, problem: str, hint: str | None = None) -> None:
    """Schema check: raise one clear line naming the file when the harness output is not what we expect."""
    if not cond:
        raise DuetError(f"{path}: {problem}", hint=hint)


def number(value: Any, path: Path | str, what: str) -> float:
    """A finite JSON number (bool excluded, since JSON true is not a measurement)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DuetError(f"{path}: {what} is {value!r}, expected a finite number")
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an integer with hundreds of digits is beyond any float
        finite = False
    if not finite:
        shown = repr(value) if len(repr(value)) <= 30 else f"a {len(str(value))}-digit number"
        raise DuetError(f"{path}: {what} is {shown}, expected a finite number")
    return float(value)


def duration(value: Any, path: Path | str, what: str) -> float:
    """A finite number that is not negative: a time, a rate or a count; named where it is in the file."""
    x = number(value, path, what)
    if x < 0:
        raise DuetError(f"{path}: {what} is {value!r}, negative", hint="the file was edited or corrupted; "
                        "give the harness's output as it wrote it")
    return x


def unit_seconds(unit: str, path: Path | str, what: str) -> float:
    try:
        return SECONDS_PER_UNIT[unit]
    except KeyError:
        known = ", ".join(SECONDS_PER_UNIT)
        raise DuetError(f"{path}: {what} has unknown time unit {unit!r} (known: {known})") from None


TimeUnit = Literal["s", "ms", "us", "ns"]
_NS_PER_UNIT = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def timestamp_ns(text: str, unit: str) -> int | None:
    """``text`` (an integer or decimal number in ``unit``) in integer nanoseconds; None if it is not a number.

    Decimal arithmetic keeps epoch timestamps exact: a float holds only ~16 digits, an epoch in ns has 19.
    """
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    if not value.is_finite():
        return None
    return int(value * _NS_PER_UNIT[unit])


def truthy(text: str) -> bool | None:
    """A warmup flag as people write it in tables; None when it is neither true nor false."""
    t = text.strip().lower()
    if t in ("1", "true", "yes", "y", "w", "warmup"):
        return True
    if t in ("0", "false", "no", "n", "m", "measurement", ""):
        return False
    return None
