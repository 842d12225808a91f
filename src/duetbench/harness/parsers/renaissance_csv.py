"""Renaissance ``--csv FILE``: header ``benchmark,<metrics…>,vm_start_unix_ms[,vm_start_ns]``, one row per operation."""
from __future__ import annotations

import csv
import io
from pathlib import Path

from .._common import pick_file, read_text, require
from ..model import ParseResult, ParserInput
from ._renaissance import Operation, Options, build

__all__ = ["Options", "parse"]

_REQUIRED = ("benchmark", "duration_ns", "uptime_ns", "vm_start_unix_ms")


def _integer(row: list[str], col: dict[str, int], name: str, path: Path, number: int) -> int:
    text = row[col[name]]
    require(text.isdecimal(), path, f"line {number}: {name} is {text!r}, expected an integer")
    return int(text)


def parse(inp: ParserInput, options: Options) -> ParseResult:
    path = pick_file(inp, options.file, "renaissance-csv")
    rows = list(csv.reader(io.StringIO(read_text(path))))
    require(bool(rows), path, "empty file, expected a Renaissance CSV header")
    header = rows[0]
    missing = [c for c in _REQUIRED if c not in header]
    require(not missing, path, f"not a Renaissance CSV result: missing column(s) {', '.join(missing)}",
            hint="run Renaissance with --csv FILE")
    col = {name: header.index(name) for name in header}
    ops: list[Operation] = []
    for number, row in enumerate(rows[1:], start=2):
        if not row:
            continue
        require(len(row) == len(header), path, f"line {number}: {len(row)} fields, the header has {len(header)}")
        start_ns = _integer(row, col, "vm_start_ns", path, number) if "vm_start_ns" in col else None
        ops.append(Operation(row[col["benchmark"]], _integer(row, col, "duration_ns", path, number),
                             _integer(row, col, "uptime_ns", path, number),
                             _integer(row, col, "vm_start_unix_ms", path, number), start_ns))
    return build(ops, path, options, {})
