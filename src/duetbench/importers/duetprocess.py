"""The CSV written by the thesis tool (Drozdík 2023, github.com/TomasDrozdik/asynchronous-duet,
`duetprocess`): one row per iteration with suite, benchmark, type, runid, pair, iteration,
iteration_start_ns, iteration_end_ns, iteration_time_ns, order.

Types: the tool writes "seqn" (older versions "sequential"), "syncduet"/"sduet" for the synchronous
duet and "duet"/"aduet" for the asynchronous one — in the thesis, a plain "duet" is the async duet.
"""
from __future__ import annotations

from pathlib import Path

from duetbench.errors import DuetError

from ._csv import read_columns, require_columns
from ._table import Imported
from .csv_mapping import CsvMapping, read_csv

TYPES = {"seqn": "sequential", "sequential": "sequential", "sduet": "duet", "syncduet": "duet",
         "aduet": "aduet", "duet": "aduet"}
_REQUIRED = ["benchmark", "runid", "pair", "iteration", "iteration_time_ns"]


def read_duetprocess(path: Path, *, method: str | None = None) -> Imported:
    """Iterations of a `duetprocess` CSV. `method` is required only when the file has no `type` column
    (the oldest tool versions ran one method per file)."""
    path = Path(path)
    cols = read_columns(path)
    require_columns(path, cols, _REQUIRED, "is this a duetprocess CSV? use 'duet import csv' with a mapping otherwise")
    columns: dict[str, tuple[str, ...]] = {
        "benchmark": ("suite", "benchmark") if "suite" in cols else ("benchmark",),
        "run": ("runid",), "side": ("pair",), "value": ("iteration_time_ns",), "index": ("iteration",)}
    constants: dict[str, str] = {}
    if "type" in cols and method is None:
        columns["method"] = ("type",)
        unknown = sorted(set(cols["type"].tolist()) - set(TYPES))
        if unknown:
            raise DuetError(f"{path}: unknown type(s) {', '.join(map(repr, unknown))} in column 'type'",
                            hint=f"known: {', '.join(TYPES)}; or force one with --method")
    elif method is not None:
        constants["method"] = method
    else:
        raise DuetError(f"{path}: no 'type' column, so the method is unknown",
                        hint="say which with --method sequential|duet|aduet")
    if "iteration_start_ns" in cols and "iteration_end_ns" in cols:
        columns["start"] = ("iteration_start_ns",)
        columns["end"] = ("iteration_end_ns",)
    mapping = CsvMapping(columns=columns, constants=constants, values={"method": TYPES}, unit="ns", time_unit="ns")
    imported = read_csv(path, mapping, fmt="duetprocess")
    return Imported(imported.table, "duetprocess", imported.files, {}, imported.notes)
