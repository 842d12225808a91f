"""Per benchmark and method of an IterationTable: the rows of `duet analyze`, `duet report` and `duet run`'s
closing summary and precision stop, so that they judge the same data the same way.

The table's adapter to `analyze.api.analyze`: selects what enters (the options' benchmarks and methods, the
warmup), and states how a sync duet's runs are paired from their recorded synchronization. The estimators
(`analyze.estimators`, docs/methods.md) are chosen by the options; ``auto`` (the default) picks each method's own.
"""
from __future__ import annotations

import fnmatch
from collections.abc import Mapping

import msgspec
import numpy as np

from duetbench.analyze.api import AnalysisOptions, AnalysisRow, analyze, counted_row
from duetbench.analyze.estimators import check_estimator
from duetbench.analyze.sync import GroupSync, SyncStatus, plan_pairing
from duetbench.model.method import METHODS
from duetbench.model.table import IterationTable, discard_leading


def _as_aduet(rows: IterationTable) -> IterationTable:
    return msgspec.structs.replace(rows, method=np.full(len(rows), "aduet", dtype=object))


def _duet_pairing(bench: str, measured: IterationTable,
                  sync: Mapping[tuple[str, int], SyncStatus | None]) -> GroupSync:
    # A harness run holding several benchmarks names them "<campaign benchmark>/<inner>"; the status
    # belongs to the run, so to the campaign benchmark.
    owner = bench.split("/", 1)[0]
    statuses = {int(r): sync.get((owner, int(r))) for r in np.unique(measured.run)}
    return plan_pairing(statuses, measured.has_timestamps())


def analyze_table(table: IterationTable, opts: AnalysisOptions,
                  sync: Mapping[tuple[str, int], SyncStatus | None] | None = None) -> list[AnalysisRow]:
    """One row per benchmark and method present (filtered by the options), in table order.

    `sync`: each stored sync duet run's recorded synchronization, keyed by (benchmark, repetition)
    (sync.run_sync_statuses). With it, a benchmark's duet runs are paired by iteration only when
    all were synchronized, else by time overlap or not at all, and the row states which (`sync`); without
    it (data that never went through `duet run`) they are paired by iteration as before."""
    check_estimator(opts.estimator)
    unknown = [m for m in opts.methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r}; known: {', '.join(METHODS)}")
    table = discard_leading(table, count=opts.warmup_count, fraction=opts.warmup_fraction)
    out = []
    for bench, method, rows in table.groups():
        if opts.benchmarks and not any(fnmatch.fnmatchcase(bench, g) for g in opts.benchmarks):
            continue
        if opts.methods and method not in opts.methods:
            continue
        measured = rows.measured()
        row = counted_row(bench, method, measured)
        # (no run left to pair, e.g. every iteration taken as warm-up: nothing to say of their pairing)
        plan = _duet_pairing(bench, measured, sync) if sync is not None and method == "duet" and len(measured) else None
        if plan is not None:
            row.pairing, row.sync = ("refused" if plan.pairing == "refuse" else plan.pairing), plan.statement
            if plan.pairing == "refuse":
                row.problem = plan.statement
                out.append(row)
                continue
            if len(plan.runs) < row.runs:
                rows = rows.where(np.isin(rows.run, plan.runs))
                measured = measured.where(np.isin(measured.run, plan.runs))
                row.runs = len(plan.runs)
                row.iterations_a = int(np.sum(measured.side == "A"))
                row.iterations_b = int(np.sum(measured.side == "B"))
        row.notes = [plan.statement] if plan is not None else []
        try:
            # With the warm-up rows: `analyze` leaves them out itself, and says so when they took every iteration.
            if plan is not None and plan.pairing == "overlap":
                row.result = analyze("aduet", _as_aduet(rows), opts)
            else:
                row.result = analyze(method, rows, opts)
            row.notes += list(row.result.notes)
        except ValueError as exc:
            row.problem = str(exc)
        out.append(row)
    return out


__all__ = ["AnalysisOptions", "AnalysisRow", "analyze_table"]
