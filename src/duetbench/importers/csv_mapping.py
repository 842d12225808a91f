"""A CSV of any layout, described by a column mapping: which column(s) give the benchmark, method,
run, side, value, and optionally iteration index, start, end and warmup flag.

A field is one column, several columns joined with "/" (a benchmark identified by suite and name,
a run identified by VM and repetition), or a constant. Value maps rename what the source writes
(side 1/2, types seqn/sduet) to what duetbench uses (A/B, sequential/duet/aduet).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from duetbench.errors import DuetError
from duetbench.harness._common import SECONDS_PER_UNIT, truthy

from ._csv import read_columns
from ._table import Imported, build_table

FIELDS = ("benchmark", "method", "run", "side", "value", "index", "start", "end", "warmup")
REQUIRED = ("benchmark", "method", "side", "value")
TIME_UNITS = ("ns", "us", "ms", "s", "iso")
_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


@dataclass(frozen=True)
class CsvMapping:
    """How a CSV's columns become iterations.

    columns: field -> source column names (joined with "/" when several); without a run column every
        row is its own run;
    constants: field -> one value for every row (e.g. method "sequential");
    values: field -> {source value: duetbench value} (unmapped values pass through unchanged);
    unit: unit of the value column; time_unit: unit of start/end ("iso" for ISO-8601 date-times);
    where: column -> allowed values (rows with others are skipped)."""

    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    values: dict[str, dict[str, str]] = field(default_factory=dict)
    unit: str = "s"
    time_unit: str = "ns"
    where: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def check(self) -> None:
        for f in [*self.columns, *self.constants, *self.values]:
            if f not in FIELDS:
                raise DuetError(f"unknown field {f!r} in the column mapping", hint=f"fields: {', '.join(FIELDS)}")
        both = set(self.columns) & set(self.constants)
        if both:
            raise DuetError(f"field {sorted(both)[0]!r} is given both as a column and as a constant",
                            hint="give one of them")
        missing = [f for f in REQUIRED if f not in self.columns and f not in self.constants]
        if missing:
            raise DuetError(f"the column mapping has no {', '.join(missing)}",
                            hint="e.g. --col side=version --set method=sequential (see docs/import.md)")
        if self.unit not in SECONDS_PER_UNIT:
            raise DuetError(f"unknown value unit {self.unit!r}", hint=f"use one of {', '.join(SECONDS_PER_UNIT)}")
        if self.time_unit not in TIME_UNITS:
            raise DuetError(f"unknown time unit {self.time_unit!r}", hint=f"use one of {', '.join(TIME_UNITS)}")
        if ("start" in self.columns) != ("end" in self.columns):
            raise DuetError("the column mapping gives only one of start and end", hint="give both, or neither")


def _field(path: Path, cols: dict[str, np.ndarray], mapping: CsvMapping, name: str, n: int) -> np.ndarray | None:
    if name in mapping.constants:
        out = np.full(n, mapping.constants[name], dtype=object)
    elif name in mapping.columns:
        names = mapping.columns[name]
        missing = [c for c in names if c not in cols]
        if missing:
            raise DuetError(f"{path}: no column {missing[0]!r} (for {name}); it has: {', '.join(cols)}",
                            hint="fix the column mapping (--col FIELD=COLUMN)")
        out = cols[names[0]].astype(str).astype(object)
        for c in names[1:]:
            out = out + "/" + cols[c].astype(str).astype(object)
    else:
        return None
    table = mapping.values.get(name)
    if table:
        keys = np.array(list(table), dtype=object)
        hit = np.isin(out, keys)
        if hit.any():
            lookup = np.vectorize(table.__getitem__, otypes=[object])
            out = out.copy()
            out[hit] = lookup(out[hit])
    return out


def _numbers(path: Path, text: np.ndarray, rows: np.ndarray, what: str) -> np.ndarray:
    try:
        return text.astype(float)
    except ValueError:
        bad = next(i for i, t in enumerate(text) if not _is_float(t))
        raise DuetError(f"{path}: row {rows[bad]}: {what} {text[bad]!r} is not a number",
                        hint="check the column mapping for this field") from None


def _is_float(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _timestamps(path: Path, text: np.ndarray, rows: np.ndarray, unit: str, what: str) -> np.ndarray:
    if unit != "iso":
        out = np.empty(text.size, dtype=np.int64)
        for i, t in enumerate(text):
            # Integers convert exactly: an epoch in ns has 19 digits, more than a float holds.
            try:
                out[i] = int(t) * _NS[unit]
            except OverflowError:  # beyond 64 bits: no time stamp of this world
                raise DuetError(f"{path}: row {rows[i]}: {what} {str(t)[:40]!r} is out of range",
                                hint="check the mapping and --time-unit") from None
            except ValueError:
                try:
                    out[i] = round(float(t) * _NS[unit])
                except (ValueError, OverflowError):
                    raise DuetError(f"{path}: row {rows[i]}: {what} {t!r} is not a number",
                                    hint="check the mapping, or use --time-unit iso for date-times") from None
        return out
    out = np.empty(text.size, dtype=np.int64)
    for i, t in enumerate(text):
        try:
            stamp = datetime.fromisoformat(str(t).replace("Z", "+00:00"))
        except ValueError:
            raise DuetError(f"{path}: row {rows[i]}: {what} {t!r} is not an ISO-8601 date-time",
                            hint="use --time-unit ns|us|ms|s for numeric timestamps") from None
        # Naive times are taken as UTC: only differences between timestamps matter for pairing.
        seconds = stamp.timestamp() if stamp.tzinfo else stamp.replace(tzinfo=UTC).timestamp()
        out[i] = int(seconds) * 1_000_000_000 + stamp.microsecond * 1_000
    return out


def read_csv(path: Path, mapping: CsvMapping, *, fmt: str = "csv") -> Imported:
    """Iterations of a CSV described by `mapping` (one row per iteration)."""
    mapping.check()
    path = Path(path)
    cols = read_columns(path)
    n = len(next(iter(cols.values())))
    rows = np.arange(2, n + 2)  # line numbers: the header is line 1
    keep = np.ones(n, dtype=bool)
    for column, allowed in mapping.where.items():
        if column not in cols:
            raise DuetError(f"{path}: no column {column!r} (in --where); it has: {', '.join(cols)}",
                            hint="fix the --where filter")
        keep &= np.isin(cols[column], np.array(allowed, dtype=object))
    if not keep.any():
        raise DuetError(f"{path}: no row passes the --where filter", hint="check the filter's values")
    cols = {k: v[keep] for k, v in cols.items()}
    rows, n = rows[keep], int(keep.sum())
    get = {f: _field(path, cols, mapping, f, n) for f in FIELDS}
    if get["run"] is None:  # no run column: every row is a run of one iteration (per-run summaries)
        get["run"] = np.arange(n).astype(str).astype(object)
    value = _numbers(path, get["value"], rows, "value") * SECONDS_PER_UNIT[mapping.unit]  # type: ignore[arg-type]
    index = None
    if get["index"] is not None:
        idx = _numbers(path, get["index"], rows, "index")
        if not np.all(np.isfinite(idx) & (idx == np.round(idx)) & (np.abs(idx) < 2**53)):
            raise DuetError(f"{path}: the index column holds non-integers (or integers beyond 2**53)",
                            hint="map index to an iteration number")
        index = idx.astype(np.int64)
    start = end = None
    if get["start"] is not None:
        start = _timestamps(path, get["start"], rows, mapping.time_unit, "start")
        end = _timestamps(path, get["end"], rows, mapping.time_unit, "end")  # type: ignore[arg-type]
    warmup = None
    if get["warmup"] is not None:
        flags = [truthy(str(t)) for t in get["warmup"]]
        bad = next((i for i, f in enumerate(flags) if f is None), None)
        if bad is not None:
            raise DuetError(f"{path}: row {rows[bad]}: warmup flag {get['warmup'][bad]!r} is neither true nor false",
                            hint="use 1/0, true/false or yes/no")
        warmup = np.array(flags, dtype=bool)
    table = build_table(str(path), benchmark=get["benchmark"], method=get["method"],  # type: ignore[arg-type]
                        run_key=get["run"], side=get["side"], value_s=value,  # type: ignore[arg-type]
                        index=index, start_ns=start, end_ns=end, warmup=warmup, rows=rows)
    return Imported(table, fmt, (str(path),), {"mapping": _describe(mapping)})


def _describe(mapping: CsvMapping) -> dict[str, object]:
    return {"columns": {k: list(v) for k, v in mapping.columns.items()}, "constants": dict(mapping.constants),
            "values": mapping.values, "unit": mapping.unit, "time_unit": mapping.time_unit,
            "where": {k: list(v) for k, v in mapping.where.items()}}

