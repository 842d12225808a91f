"""From raw imported columns to a checked IterationTable: run numbering, validation, one-line errors."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from duetbench.errors import DuetError
from duetbench.model.table import METHODS, NO_TIME, IterationTable


@dataclass(frozen=True)
class Imported:
    """What an importer read: the iterations plus where they came from (kept with the stored campaign)."""

    table: IterationTable
    format: str
    files: tuple[str, ...]
    metadata: dict[str, object] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


def first_seen_codes(keys: np.ndarray) -> np.ndarray:
    """Dense integer codes 0, 1, ... numbered in order of first appearance (not sorted order)."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def number_runs(benchmark: np.ndarray, method: np.ndarray, side: np.ndarray, run_key: np.ndarray) -> np.ndarray:
    """Run numbers from 0 per (benchmark, method), in order of first appearance.

    Duet runs hold both sides, so a run id is shared by A and B. Sequential runs are independent
    launches: they are numbered per side, so the r-th A run and the r-th B run both get r (the
    IterationTable convention), whatever ids the source gave them."""
    sequential = method == "sequential"
    group = np.where(sequential, benchmark + "\x1f" + method + "\x1f" + side, benchmark + "\x1f" + method)
    composite = group + "\x1e" + run_key.astype(str).astype(object)
    codes = first_seen_codes(composite.astype(str))
    group_codes = first_seen_codes(group.astype(str))
    # Global first-seen codes keep each group's order but are not contiguous when groups interleave:
    # rank them within their group.
    order = np.lexsort((codes, group_codes))
    out = np.empty_like(codes)
    g, c = group_codes[order], codes[order]
    new_group = np.r_[True, g[1:] != g[:-1]]
    new_run = new_group | np.r_[True, c[1:] != c[:-1]]
    run_number = np.cumsum(new_run) - 1
    group_start = run_number[new_group]
    out[order] = run_number - np.repeat(group_start, np.diff(np.r_[np.flatnonzero(new_group), len(g)]))
    return out


def index_within_run(benchmark: np.ndarray, method: np.ndarray, run: np.ndarray, side: np.ndarray) -> np.ndarray:
    """0, 1, ... per (benchmark, method, run, side) in file order: for sources without an iteration column."""
    key = first_seen_codes((benchmark + "\x1f" + method + "\x1f" + side + "\x1f" + run.astype(str)).astype(str))
    order = np.argsort(key, kind="stable")
    k = key[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    pos = np.arange(k.size) - np.repeat(starts, np.diff(np.r_[starts, k.size]))
    out = np.empty_like(pos)
    out[order] = pos
    return out


class _Shown:
    """A value in an error message: its repr, cut to a readable length."""

    def __init__(self, value: object) -> None:
        self.value = value

    def __repr__(self) -> str:
        text = repr(self.value)
        return text if len(text) <= 60 else text[:56] + "...'"


def build_table(where: str, *, benchmark: np.ndarray, method: np.ndarray, run_key: np.ndarray, side: np.ndarray,
                value_s: np.ndarray, index: np.ndarray | None = None, start_ns: np.ndarray | None = None,
                end_ns: np.ndarray | None = None, warmup: np.ndarray | None = None,
                rows: np.ndarray | None = None) -> IterationTable:
    """Validate imported columns and number the runs; `rows` (source line numbers) locate errors."""
    n = value_s.size
    rows = np.arange(2, n + 2) if rows is None else rows
    benchmark = benchmark.astype(str).astype(object)
    method = method.astype(str).astype(object)
    side = side.astype(str).astype(object)

    def fail(mask: np.ndarray, problem: str, column: np.ndarray | None, hint: str) -> None:
        if mask.any():
            i = int(np.flatnonzero(mask)[0])
            value = None if column is None else column[i]
            # A numpy scalar reads np.float64(0.0) in a message; the user wrote 0.0. Keep it short, too.
            value = _Shown(value.item() if isinstance(value, np.generic) else value)
            text = problem.format(first=value)
            raise DuetError(f"{where}: row {rows[i]}: {text} ({int(mask.sum())} such row(s))", hint=hint)

    fail(~np.isin(method, METHODS), "method {first!r} is not sequential, duet or aduet", method,
         "map the source's names onto these (e.g. --map method:seqn=sequential)")
    fail(~np.isin(side, ("A", "B")), "side {first!r} is not A or B", side,
         "map the source's names onto A and B (e.g. --map side:1=A,2=B)")
    fail(~np.isfinite(value_s) | (value_s <= 0), "value {first!r} s is not a positive finite time", value_s,
         "values must be durations (lower is better); check the value column and its unit")
    fail(benchmark == "", "benchmark name is empty", None, "check the benchmark column")
    run = number_runs(benchmark, method, side, run_key)
    if index is None:
        index = index_within_run(benchmark, method, run, side)
    start = np.full(n, NO_TIME, dtype=np.int64) if start_ns is None else start_ns.astype(np.int64)
    end = np.full(n, NO_TIME, dtype=np.int64) if end_ns is None else end_ns.astype(np.int64)
    known = (start != NO_TIME) & (end != NO_TIME)
    fail(known & (end < start), "iteration ends before it starts", None,
         "check the start and end columns and their unit")
    key = (benchmark + "\x1f" + method + "\x1f" + side + "\x1f" + run.astype(str) + "\x1f"
           + index.astype(str)).astype(str)
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    dup = np.zeros(n, dtype=bool)
    dup[first[counts > 1]] = True
    fail(dup, "the same iteration (benchmark, method, run, side, index) appears more than once", None,
         "the run and iteration columns must identify every row; add a column to the run mapping")
    return IterationTable.from_columns(
        benchmark=benchmark, method=method, run=run, side=side, index=index.astype(np.int64), value=value_s,
        start_ns=start, end_ns=end, warmup=np.zeros(n, dtype=bool) if warmup is None else warmup.astype(bool))
