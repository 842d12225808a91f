"""The iteration table: every measured iteration of a campaign as columns of numpy arrays.

This is what every analysis of issue 4 consumes (per-benchmark ratios, A/A studies, minimal detectable
slowdown, shuffle analysis, runtime saving, overlaps, the HTML report), whatever the data came from: a
`duet run` campaign in the store, or measurements imported from other tools. Columnar and vectorized:
a campaign of a million iterations is a few arrays, not a million objects.

One row per iteration. Runs are numbered per (benchmark, method); for the duet methods a run holds both
sides (rows with side "A" and "B" share the run number), for the sequential method the A run and the B
run of repetition r share the run number r too (they are independent launches, not pairs).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import msgspec
import numpy as np

from duetbench.model.method import METHODS

__all__ = ["METHODS", "NO_TIME", "IterationTable", "discard_leading", "discard_per_benchmark"]

NO_TIME = np.int64(-1)


class IterationTable(msgspec.Struct, frozen=True):
    benchmark: np.ndarray  # object (str)
    method: np.ndarray  # object (str): sequential | duet | aduet
    run: np.ndarray  # int64, run number within (benchmark, method), from 0
    side: np.ndarray  # object (str): "A" | "B"
    index: np.ndarray  # int64, iteration index within the run's side, from 0, warmups included
    value: np.ndarray  # float64, seconds (lower is better)
    start_ns: np.ndarray  # int64, absolute start; NO_TIME (-1) when unknown
    end_ns: np.ndarray  # int64, absolute end; NO_TIME when unknown
    warmup: np.ndarray  # bool, the harness (or the warmup policy) says it is not measured

    def __post_init__(self) -> None:
        n = len(self.value)
        for name in self.__struct_fields__:
            column = getattr(self, name)
            if not isinstance(column, np.ndarray) or column.shape != (n,):
                raise ValueError(f"column {name!r} must be a 1-D array of length {n}")

    def __len__(self) -> int:
        return int(self.value.size)

    @classmethod
    def from_columns(cls, **columns: object) -> IterationTable:
        """Build from sequences; start_ns/end_ns/warmup/index may be omitted (unknown / False / 0..n)."""
        n = len(columns["value"])  # type: ignore[arg-type]
        out = {
            "benchmark": np.asarray(columns["benchmark"], dtype=object),
            "method": np.asarray(columns["method"], dtype=object),
            "run": np.asarray(columns["run"], dtype=np.int64),
            "side": np.asarray(columns["side"], dtype=object),
            "index": np.asarray(columns.get("index", np.zeros(n)), dtype=np.int64),
            "value": np.asarray(columns["value"], dtype=np.float64),
            "start_ns": np.asarray(columns.get("start_ns", np.full(n, NO_TIME)), dtype=np.int64),
            "end_ns": np.asarray(columns.get("end_ns", np.full(n, NO_TIME)), dtype=np.int64),
            "warmup": np.asarray(columns.get("warmup", np.zeros(n, dtype=bool)), dtype=bool),
        }
        return cls(**out)

    def where(self, mask: np.ndarray) -> IterationTable:
        return IterationTable(**{name: getattr(self, name)[mask] for name in self.__struct_fields__})

    def measured(self) -> IterationTable:
        return self.where(~self.warmup)

    def has_timestamps(self) -> bool:
        return bool(len(self)) and bool(np.all(self.start_ns != NO_TIME)) and bool(np.all(self.end_ns != NO_TIME))

    def groups(self) -> Iterator[tuple[str, str, IterationTable]]:
        """(benchmark, method, rows) for every benchmark and method present, benchmarks in first-seen order."""
        for bench in dict.fromkeys(self.benchmark.tolist()):
            in_bench = self.benchmark == bench
            for method in METHODS:
                mask = in_bench & (self.method == method)
                if mask.any():
                    yield bench, method, self.where(mask)

    def runs_of(self, side: str) -> list[np.ndarray]:
        """Values of one side, one array per run (in run order), iterations in index order."""
        rows = self.where(self.side == side)
        order = np.lexsort((rows.index, rows.run))
        runs, values = rows.run[order], rows.value[order]
        cuts = np.flatnonzero(np.diff(runs)) + 1
        return np.split(values, cuts) if len(values) else []


def discard_leading(table: IterationTable, count: int = 0, fraction: float = 0.0,
                    rule: Callable[[int], int] | None = None) -> IterationTable:
    """Mark the first `count` (or floor(fraction·n), or rule(n)) measured iterations of every run side as
    warmup, n being that run side's measured iterations.

    The fixed warmup policy of docs/methods.md (Drozdík 2023 drops the first half of JVM iterations)."""
    if count <= 0 and fraction <= 0 and rule is None:
        return table
    warm = table.warmup.copy()
    keys = np.stack([table.run, (table.side == "B").astype(np.int64)])
    for bench, method in {(b, m) for b, m in zip(table.benchmark.tolist(), table.method.tolist(), strict=True)}:
        sel = np.flatnonzero((table.benchmark == bench) & (table.method == method) & ~table.warmup)
        if not sel.size:
            continue
        order = sel[np.lexsort((table.index[sel], keys[1, sel], keys[0, sel]))]
        group_keys = keys[:, order]
        starts = np.flatnonzero(np.r_[True, np.any(np.diff(group_keys, axis=1) != 0, axis=0)])
        sizes = np.diff(np.r_[starts, order.size])
        position = np.arange(order.size) - np.repeat(starts, sizes)
        per_group = (np.array([rule(int(n)) for n in sizes], dtype=np.int64) if rule is not None
                     else np.maximum(count, np.floor(sizes * fraction).astype(np.int64)))
        drop = np.repeat(per_group, sizes)
        warm[order[position < drop]] = True
    return msgspec.structs.replace(table, warmup=warm)


def discard_per_benchmark(table: IterationTable, rules: Mapping[str, Callable[[int], int]]) -> IterationTable:
    """`discard_leading` with each benchmark's own rule; a harness run's inner benchmarks ("<name>/<inner>")
    follow the rule of <name>. Benchmarks without a rule are left as they are."""
    if not rules or not len(table):
        return table
    warm = table.warmup.copy()
    names = table.benchmark.astype(str)
    for name, rule in rules.items():
        mask = (names == name) | np.char.startswith(names, name + "/")
        if mask.any():
            warm[np.flatnonzero(mask)] = discard_leading(table.where(mask), rule=rule).warmup
    return msgspec.structs.replace(table, warmup=warm)
