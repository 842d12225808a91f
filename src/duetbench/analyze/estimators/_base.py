"""What every estimator shares: the `Estimate` it returns, and the ways of handing a method's rows to
`comparison.compare` (the array statistics). An estimator only decides what the CI resamples; the checks,
the winsorization, the A/B summaries, the U test and the verdict are `analyze.api.analyze`'s, the same for all."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import msgspec
import numpy as np

from duetbench.model.table import IterationTable

from ..comparison import ComparisonResult, compare
from ..pairing import paired_runs, rebased_timeline
from ..ratio import DifferenceResult, RatioResult

if TYPE_CHECKING:
    from ..api import AnalysisOptions


class Estimate(msgspec.Struct, frozen=True):
    """The CI of B/A an estimator made, with what it used: the part of a `ComparisonResult` that depends on
    the estimator."""

    ratio: RatioResult
    units: int  # what entered the CI: pairs, runs or runs per side (`ComparisonResult.runs`)
    difference: DifferenceResult | None = None  # sequential only
    outliers_removed: int = 0  # pairs the robust filter set aside
    ratio_cv: float | None = None  # CV of the pair ratios that entered the CI (duet, aduet)
    notes: tuple[str, ...] = ()

    @classmethod
    def of(cls, r: ComparisonResult) -> Estimate:
        return cls(ratio=r.ratio, units=r.runs, difference=r.difference, outliers_removed=r.outliers_removed,
                   ratio_cv=r.ratio_cv, notes=r.notes)


class Estimator(Protocol):
    """`(method, measured rows of one benchmark and method, options) -> Estimate`; raises ValueError (one line,
    what to do) when the rows cannot give this estimator's CI."""

    def __call__(self, method: str, rows: IterationTable, opts: AnalysisOptions) -> Estimate: ...


def judge(method: str, a: Any, b: Any, opts: AnalysisOptions, **pairing: Any) -> Estimate:
    """`compare` with the options' confidence, resamples, seed, robust filter and interval."""
    return Estimate.of(compare(method, a, b, metric=opts.metric, confidence_level=opts.confidence_level,
                               n_resamples=opts.n_resamples, random_state=opts.seed, robust=opts.robust,
                               min_overlap_rate=opts.min_overlap_rate, u_test=False, interval=opts.interval,
                               **pairing))


def flat_if_single(runs: list[np.ndarray]) -> list[np.ndarray] | np.ndarray:
    """Runs of one value each as one flat array: a flat sample *is* R runs of one observation
    (`_inputs.Runs`), and `compare` gives it the per-unit interval (Yuen's over a duet's pairs). So
    `duet compare`'s invocations (every invocation its own run) and a campaign of one iteration per run
    get the same answer from every estimator."""
    if runs and all(r.size == 1 for r in runs):
        return np.concatenate(runs)
    return runs


def sequential_runs(rows: IterationTable) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A's and B's runs (iterations in index order), runs without measured iterations left out."""
    a = [x for x in rows.runs_of("A") if x.size]
    b = [x for x in rows.runs_of("B") if x.size]
    if not a or not b:
        raise ValueError("needs measured iterations of both A and B")
    return a, b


def duet_runs(rows: IterationTable) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A's and B's values paired by (run, iteration index), per run (`pairing.paired_runs`)."""
    a, b = paired_runs(rows)
    if not a:
        raise ValueError("no run with measured iterations on both sides: no iteration of A has a B partner "
                         "with the same run and index")
    return a, b


def check_timestamps(rows: IterationTable) -> None:
    if not rows.has_timestamps():
        raise ValueError("the async duet pairs iterations by time, but these iterations have no start/end "
                         "timestamps (the harness's output has none and no duet hook logged them)")


def aduet_by_run(rows: IterationTable, opts: AnalysisOptions) -> Estimate:
    """The async duet paired within each run, the CI over runs (each a unit: Drozdík 2023 §4.3.2); with one
    run, over its overlap pairs. Overlaps are looked for within runs only: runs may share a clock range
    across machines or restarts."""
    check_timestamps(rows)
    a, b = rows.where(rows.side == "A"), rows.where(rows.side == "B")
    by_run = np.unique(rows.run).size > 1
    return judge("aduet", a.value, b.value, opts, a_start=a.start_ns, a_end=a.end_ns, b_start=b.start_ns,
                 b_end=b.end_ns, a_run_ids=a.run if by_run else None, b_run_ids=b.run if by_run else None)


def aduet_pooled(rows: IterationTable, opts: AnalysisOptions) -> Estimate:
    """The async duet paired within runs (each run moved to its own stretch of time,
    `pairing.rebased_timeline`), every overlap pair its own unit."""
    check_timestamps(rows)
    start, end = rebased_timeline(rows)
    ia, ib = rows.side == "A", rows.side == "B"
    return judge("aduet", rows.value[ia], rows.value[ib], opts, a_start=start[ia], a_end=end[ia],
                 b_start=start[ib], b_end=end[ib])
