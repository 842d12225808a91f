"""The one way into the analysis: A against B of one benchmark and method, whatever the data came from.

`analyze(method, samples, options)` takes the samples as an `IterationTable` (one benchmark × method) and
returns a `ComparisonResult`. Every entry point goes through it, each with a small adapter to the table:

- `duet compare` and `duet show`: the stored invocations (`analyze.invocations.as_table`: every invocation,
  or duet pair, is a run of one iteration; the async duet's invocations are one run);
- `duet analyze`, `duet report` and `duet run`'s closing summary and precision stop: a campaign's iteration
  table, one group after another (`analyze.tables.analyze_table`);
- the method studies (`analyze.studies`, `analyze.slowdown`, `analyze.honesty`): one group at a time.

What is the same for every estimator is done here once: the checks, the per-run winsorization, the A/B
summaries and the Mann–Whitney U test (both on all measured iterations, winsorized when asked), the verdict
and the metric's name. The estimators (`analyze.estimators`) only make the CI; "auto" picks each method's own.
"""
from __future__ import annotations

import math

import msgspec
import numpy as np

from duetbench.model.method import check_method
from duetbench.model.table import IterationTable

from ._inputs import RandomState
from .comparison import ComparisonResult
from .estimators import estimator_for
from .filter import winsorize_run
from .summary import describe, relative_ci_width
from .tests import mann_whitney_u
from .verdicts import verdict

#: The largest time the statistics compute with: variances square the values, and past ~1e154 s the squares
#: overflow to inf, whose differences are NaN ("degrees of freedom must be positive (got nan)").
MAX_TIME_S = 1e150


class AnalysisOptions(msgspec.Struct, frozen=True):
    """How to judge: the same options for every entry point (the command line's names in parentheses)."""

    confidence_level: float = 0.99  # --confidence
    n_resamples: int = 10_000  # --resamples: bootstrap replicates
    #: The bootstrap's seed (--seed); a numpy Generator is used as is, so a study can chain its draws.
    seed: RandomState = 0
    warmup_count: int = 0  # --warmup N: tables only, the first N measured iterations of every run side dropped
    warmup_fraction: float = 0.0  # --warmup PCT%
    winsorize: bool = False  # --winsorize: each run side winsorized (Bulej et al. 2020 §4) before any estimator
    min_overlap_rate: float = 0.4  # --min-overlap: the async duet's pairing
    estimator: str = "auto"  # --estimator: a name of `analyze.estimators.ESTIMATOR_NAMES`
    robust: bool = True  # the robust pair filter of the duets (`ratio.robust_pair_filter`)
    benchmarks: tuple[str, ...] = ()  # --benchmark: tables only, glob patterns; empty = all
    methods: tuple[str, ...] = ()  # --method: tables only; empty = all
    #: "t" (default), "bootstrap", "anytime" (stopped on evidence) or "t-stopped" (the t family at α/2, for
    #: an adaptive precision stop, which judges the interval it would report; analyze/monitor.py).
    interval: str = "t"
    metric: str = "wall"  # --metric: the name the result carries ("wall", "cpu", ...)
    u_test: bool = True  # False skips the Mann–Whitney U test (u_test_p nan): live estimates and simulations


class AnalysisRow(msgspec.Struct):
    """One benchmark × method of a campaign's analysis: its comparison, or why there is none (`problem`).
    `duet analyze`'s rows, `duet run`'s closing summary and the studies' comparisons."""

    benchmark: str
    method: str
    runs: int  # runs with measured iterations that entered the analysis
    iterations_a: int
    iterations_b: int
    result: ComparisonResult | None
    problem: str = ""
    notes: list[str] = msgspec.field(default_factory=list)
    #: Sync duet rows analysed with the runs' recorded synchronization: "sync" (by iteration index),
    #: "overlap" (by time overlap, as the aduet) or "refused"; "" otherwise. `sync` is the stated line.
    pairing: str = ""
    sync: str = ""
    #: `duet run`'s summary: the stored runs of this benchmark and method that finished / failed (None elsewhere).
    runs_ok: int | None = None
    runs_failed: int = 0


def counted_row(benchmark: str, method: str, measured: IterationTable) -> AnalysisRow:
    """A row with the counts of `measured` and no result yet."""
    return AnalysisRow(benchmark, method, int(np.unique(measured.run).size), int(np.sum(measured.side == "A")),
                       int(np.sum(measured.side == "B")), None)


def winsorized(rows: IterationTable) -> IterationTable:
    """Every run side's iterations winsorized in index order (`filter.winsorize_run`, Bulej et al. 2020 §4;
    a run side of fewer than 3 is left as it is): before pairing, so every method and estimator sees the
    same values."""
    if not len(rows):
        return rows
    value = rows.value.copy()
    order = np.lexsort((rows.index, rows.side == "B", rows.run))
    run, is_b = rows.run[order], rows.side[order] == "B"
    cuts = np.flatnonzero((np.diff(run) != 0) | (np.diff(is_b) != 0)) + 1
    for idx in np.split(order, cuts):
        if idx.size >= 3:
            value[idx] = winsorize_run(value[idx])
    return msgspec.structs.replace(rows, value=value)


def analyze(method: str, samples: IterationTable, opts: AnalysisOptions) -> ComparisonResult:
    """B/A of one benchmark measured by `method`: the CI of the options' estimator, with the verdict, the
    U test and both sides' summaries. `samples`: the rows of one benchmark and method (warm-up rows are left
    out here). Raises ValueError, one line saying what is missing, when the rows cannot be judged."""
    check_method(method)
    estimate = estimator_for(opts.estimator, method)
    if not isinstance(opts.metric, str) or not opts.metric:
        raise ValueError(f"metric must be a non-empty name such as 'wall' or 'cpu', got {opts.metric!r}")
    rows = samples.measured()
    if opts.winsorize:
        rows = winsorized(rows)
    a, b = rows.value[rows.side == "A"], rows.value[rows.side == "B"]
    if a.size < 2 or b.size < 2:
        warm = samples.warmup
        ate = (f" (the warm-up took {int(np.sum(warm & (samples.side == 'A')))} A and "
               f"{int(np.sum(warm & (samples.side == 'B')))} B: lower it)" if warm.any() else "")
        raise ValueError(f"needs at least 2 measured iterations per side, got {a.size} A and {b.size} B{ate}")
    for side, x in (("A", a), ("B", b)):
        if x.max() > MAX_TIME_S:
            raise ValueError(f"{side} has a time of {x.max():.3g} s, too large to compute with (their squares "
                             f"overflow above {MAX_TIME_S:g} s); check the unit of the values")
    est = estimate(method, rows, opts)
    return ComparisonResult(
        method=method,
        metric=opts.metric,
        runs=est.units,
        ratio=est.ratio,
        verdict=verdict(est.ratio.low, est.ratio.high),
        u_test_p=mann_whitney_u(a, b).pvalue if opts.u_test else math.nan,
        relative_ci_width=relative_ci_width(est.ratio.low, est.ratio.high, est.ratio.estimate),
        a=describe(a),
        b=describe(b),
        difference=est.difference,
        outliers_removed=est.outliers_removed,
        ratio_cv=est.ratio_cv,
        notes=est.notes,
    )


def analyze_group(group: IterationTable, method: str, opts: AnalysisOptions) -> AnalysisRow:
    """`analyze` of one item of `IterationTable.groups()` (or `studies.split_groups`), as a row with its
    counts; raises ValueError, prefixed with the benchmark and method, when it cannot be judged."""
    if len(group) == 0:
        raise ValueError(f"no iterations of method {method!r} to analyze")
    benches, methods = set(group.benchmark.tolist()), set(group.method.tolist())
    if len(benches) != 1 or methods != {method}:
        raise ValueError(f"expected the rows of one benchmark measured by {method!r}, got benchmarks "
                         f"{sorted(benches)} and methods {sorted(methods)}; pass one item of IterationTable.groups()")
    bench = str(group.benchmark[0])
    row = counted_row(bench, method, group.measured())
    try:
        row.result = analyze(method, group, opts)
    except ValueError as exc:
        raise ValueError(f"{bench} ({method}): {exc}") from None
    row.notes = list(row.result.notes)
    return row


__all__ = ["AnalysisOptions", "AnalysisRow", "analyze", "analyze_group", "counted_row", "winsorized"]
