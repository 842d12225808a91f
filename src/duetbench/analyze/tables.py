"""Per benchmark and method: the ratio B/A of an IterationTable, with the options of `duet analyze`.

Selects and shapes what enters each estimator (warmup, winsorization, pairing, the bootstrap unit) and
calls `analyze.compare`; kept apart from `analyze` (pure estimators) and from the CLI, because `duet
analyze`, `duet report` and `duet run`'s closing summary judge the same data the same way.

Estimators (docs/methods.md); ``auto`` (the default) picks each method's own:
- ``run-means``: the bootstrap resamples runs, each summarized by one number — the geometric mean of its
  pair ratios for the duets (Bulej et al. 2020 §3, Drozdík 2023 §4.3.2; ``auto`` for duet and aduet), its mean for
  sequential;
- ``hierarchical``: resamples runs, then iterations (pairs, for the duets) within each drawn run (Kalibera
  & Jones; ``auto`` for sequential);
- ``merged``: all runs pooled, the bootstrap resamples pairs (duets) or iterations (sequential) —
  narrower, but blind to run-to-run variation; there for comparison with tools that pool.
"""
from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from duetbench.analyze.comparison import ComparisonResult, compare
from duetbench.analyze.filter import winsorize_run
from duetbench.analyze.grouped import paired_runs
from duetbench.analyze.summary import describe
from duetbench.model.table import METHODS, IterationTable, discard_leading
from duetbench.analyze.sync import GroupSync, SyncStatus, plan_pairing

ESTIMATORS = ("auto", "run-means", "hierarchical", "merged")


@dataclass(frozen=True)
class AnalysisOptions:
    confidence_level: float = 0.99
    n_resamples: int = 10_000
    seed: int = 0
    warmup_count: int = 0
    warmup_fraction: float = 0.0
    winsorize: bool = False
    min_overlap_rate: float = 0.4
    estimator: str = "auto"
    robust: bool = True
    benchmarks: tuple[str, ...] = ()  # glob patterns; empty = all
    methods: tuple[str, ...] = ()  # empty = all
    #: "t" (default), "bootstrap", or "t-stopped" (the t family at α/2, for a campaign's adaptive precision
    #: stop, which judges the interval it would report; analyze/monitor.py).
    interval: str = "t"


@dataclass
class AnalysisRow:
    benchmark: str
    method: str
    runs: int
    iterations_a: int
    iterations_b: int
    result: ComparisonResult | None
    problem: str = ""
    notes: list[str] = field(default_factory=list)
    #: Sync duet rows analysed with the runs' recorded synchronization: "sync" (by iteration index),
    #: "overlap" (by time overlap, as the aduet) or "refused"; "" otherwise. `sync` is the stated line.
    pairing: str = ""
    sync: str = ""


def _side_runs(rows: IterationTable, side: str, run_ids: np.ndarray) -> list[np.ndarray]:
    """One array per run in `run_ids` order (empty where the side has no rows in that run)."""
    mine = rows.where(rows.side == side)
    out = []
    for r in run_ids:
        sel = mine.run == r
        out.append(mine.value[sel][np.argsort(mine.index[sel], kind="stable")])
    return out


def _winsorized(runs: list[np.ndarray], on: bool) -> list[np.ndarray]:
    """Each run winsorized (Bulej et al. 2020 §4; it needs >= 3 values) when `on`."""
    return [winsorize_run(x) if on and x.size >= 3 else x for x in runs]


def _sides(rows: IterationTable, run_ids: np.ndarray, opts: AnalysisOptions) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A's and B's runs (winsorized when asked), unpaired: what the sequential method resamples."""
    return (_winsorized(_side_runs(rows, "A", run_ids), opts.winsorize),
            _winsorized(_side_runs(rows, "B", run_ids), opts.winsorize))


def analyze_group(rows: IterationTable, method: str, opts: AnalysisOptions) -> ComparisonResult:
    """The ratio B/A for one benchmark's rows of one method (measured rows only)."""
    run_ids = np.unique(rows.run)
    judge = functools.partial(compare, confidence_level=opts.confidence_level, n_resamples=opts.n_resamples,
                              random_state=opts.seed, robust=opts.robust, interval=opts.interval)
    if opts.estimator == "hierarchical" and method != "sequential":
        return _hierarchical_duet(rows, method, *_sides(rows, run_ids, opts), opts)
    if method == "sequential":
        a_runs, b_runs = _sides(rows, run_ids, opts)
        a = [x for x in a_runs if x.size]
        b = [x for x in b_runs if x.size]
        if not a or not b:
            raise ValueError("needs measured iterations of both A and B")
        if opts.estimator == "merged":
            return judge("sequential", np.concatenate(a), np.concatenate(b))
        if opts.estimator == "run-means":
            return judge("sequential", np.array([x.mean() for x in a]), np.array([x.mean() for x in b]))
        return judge("sequential", a, b)  # hierarchical: runs, then iterations within runs
    if method == "duet":
        # Iteration k of A with iteration k of B of the same run (the barrier started them together), as
        # the studies pair them: an iteration lost on one side costs one pair, not the alignment of the rest.
        a, b = paired_runs(rows)
        a, b = _winsorized(a, opts.winsorize), _winsorized(b, opts.winsorize)
        if not a:
            raise ValueError("no run with measured iterations on both sides")
        if opts.estimator == "merged":
            return judge("duet", np.concatenate(a), np.concatenate(b))
        return judge("duet", a, b)
    if not rows.has_timestamps():
        raise ValueError("the async duet pairs iterations by time, but these iterations have no start/end "
                         "timestamps (the harness's output has none and no duet hook logged them)")
    a_rows, b_rows = rows.where(rows.side == "A"), rows.where(rows.side == "B")
    # Overlaps are found within each run (runs may share a clock range across machines or restarts), so
    # the aduet always pairs by run and resamples runs; "merged" does not apply to it (noted by the caller).
    by_run = run_ids.size > 1
    return judge("aduet", a_rows.value, b_rows.value, a_start=a_rows.start_ns, a_end=a_rows.end_ns,
                 b_start=b_rows.start_ns, b_end=b_rows.end_ns, min_overlap_rate=opts.min_overlap_rate,
                 a_run_ids=a_rows.run if by_run else None, b_run_ids=b_rows.run if by_run else None)


def _hierarchical_duet(rows: IterationTable, method: str, a_runs: list[np.ndarray], b_runs: list[np.ndarray],
                       opts: AnalysisOptions) -> ComparisonResult:
    """The duets' hierarchical estimator (runs, then pairs within runs: analyze.grouped), in the shape of
    the other estimators' results."""
    from duetbench.analyze.grouped import compare_group

    g = compare_group(rows, method, estimator="hierarchical", confidence_level=opts.confidence_level,
                      n_resamples=opts.n_resamples, random_state=opts.seed, min_overlap_rate=opts.min_overlap_rate,
                      robust=opts.robust, interval="t" if opts.interval == "t-stopped" else opts.interval)
    a = np.concatenate([x for x in a_runs if x.size]) if a_runs else np.array([])
    b = np.concatenate([x for x in b_runs if x.size]) if b_runs else np.array([])
    return ComparisonResult(method=method, metric="wall", runs=g.runs, ratio=g.ratio, verdict=g.verdict,
                            u_test_p=g.u_test_p, relative_ci_width=g.relative_ci_width, a=describe(a), b=describe(b),
                            difference=None, outliers_removed=0, ratio_cv=None, notes=g.notes)


def _as_aduet(rows: IterationTable) -> IterationTable:
    return replace(rows, method=np.full(len(rows), "aduet", dtype=object))


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
    (sync_check.run_sync_statuses). With it, a benchmark's duet runs are paired by iteration only when
    all were synchronized, else by time overlap or not at all, and the row states which (`sync`); without
    it (data that never went through `duet run`) they are paired by iteration as before."""
    if opts.estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {opts.estimator!r}")
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
        row = AnalysisRow(bench, method, int(np.unique(measured.run).size),
                          int(np.sum(measured.side == "A")), int(np.sum(measured.side == "B")), None)
        plan = _duet_pairing(bench, measured, sync) if sync is not None and method == "duet" else None
        if plan is not None:
            row.pairing, row.sync = ("refused" if plan.pairing == "refuse" else plan.pairing), plan.statement
            if plan.pairing == "refuse":
                row.problem = plan.statement
                out.append(row)
                continue
            if len(plan.runs) < row.runs:
                measured = measured.where(np.isin(measured.run, plan.runs))
                row.runs = len(plan.runs)
                row.iterations_a = int(np.sum(measured.side == "A"))
                row.iterations_b = int(np.sum(measured.side == "B"))
        row.notes = [plan.statement] if plan is not None else []
        try:
            if plan is not None and plan.pairing == "overlap":
                row.result = analyze_group(_as_aduet(measured), "aduet", opts)
            else:
                row.result = analyze_group(measured, method, opts)
            row.notes += list(row.result.notes)
            if opts.estimator == "merged" and (method == "aduet" or plan is not None and plan.pairing == "overlap"):
                row.notes.append("the async duet pairs iterations within runs and resamples runs; 'merged' "
                                 "does not apply to it")
        except ValueError as exc:
            row.problem = str(exc)
        out.append(row)
    return out
