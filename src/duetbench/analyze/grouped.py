"""One benchmark × method of an `IterationTable` in, one comparison out, with a choice of estimator.

The bridge between the iteration table (issue 4) and the array statistics of `comparison.compare`:
it pairs the rows the way each method pairs them and picks the unit the bootstrap resamples.
Estimators (docs/methods.md):
  run_means     runs are the units: the papers' choice (Bulej et al. 2020 §3 and §4.1,
                Drozdík 2023 §4.3.2 "run means");
  merged        every iteration (sequential) or pair (duet, aduet) is its own unit; ignores run
                effects, so its CI is too narrow whenever runs differ — offered for comparison;
  hierarchical  runs, then iterations within the drawn runs (Kalibera & Jones); for the sequential
                method this is `ratio_of_means_ci` on per-run arrays; for the duets it is the same
                two-level bootstrap of the mean of per-run mean log ratios.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ._inputs import RandomState, as_generator, check_confidence_level
from .bootstrap import hierarchical_mean_distribution, percentile_interval
from .comparison import FEW_UNITS, compare
from .overlap import OverlapPairs, aduet_ratio_ci, overlap_pairs
from .interval import student_t
from .ratio import IntervalKind, RatioResult, check_interval, exp_interval, robust_pair_filter
from .summary import relative_ci_width
from duetbench.model.table import IterationTable
from .tests import mann_whitney_u
from .verdict import verdict

Estimator = Literal["run_means", "merged", "hierarchical"]
ESTIMATORS: tuple[str, ...] = ("run_means", "merged", "hierarchical")


@dataclass(frozen=True)
class GroupResult:
    """The ratio B/A of one benchmark measured by one method, as `duet analyze` prints it."""

    benchmark: str
    method: str
    estimator: str
    ratio: RatioResult
    verdict: str
    u_test_p: float  # Mann–Whitney U on all measured A against all measured B iterations
    relative_ci_width: float
    runs: int  # runs that entered the CI
    iterations: int  # measured iterations, both sides
    notes: tuple[str, ...]


def _check_group(group: IterationTable, method: str) -> str:
    if len(group) == 0:
        raise ValueError(f"no iterations of method {method!r} to analyze")
    benches = set(group.benchmark.tolist())
    methods = set(group.method.tolist())
    if len(benches) != 1 or methods != {method}:
        raise ValueError(
            f"expected the rows of one benchmark measured by {method!r}, got benchmarks {sorted(benches)} "
            f"and methods {sorted(methods)}; pass one item of IterationTable.groups()"
        )
    return str(group.benchmark[0])


def paired_runs(measured: IterationTable) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A and B values of a sync duet paired by (run, iteration index); iterations present on one
    side only (a lost or warm-up-only iteration) are left out. Per-run arrays, runs in order."""
    a = measured.where(measured.side == "A")
    b = measured.where(measured.side == "B")
    width = int(max(a.index.max(initial=0), b.index.max(initial=0))) + 1
    _, ia, ib = np.intersect1d(a.run * width + a.index, b.run * width + b.index, return_indices=True)
    if ia.size == 0:
        return [], []
    cuts = np.flatnonzero(np.diff(a.run[ia])) + 1
    return np.split(a.value[ia], cuts), np.split(b.value[ib], cuts)


@dataclass(frozen=True, eq=False)
class AduetPairs:
    """Overlap pairs of an async duet over all runs at once, with the paired values."""

    a_value: np.ndarray
    b_value: np.ndarray
    pairs: OverlapPairs
    pair_run: np.ndarray  # run of each pair, pairs sorted by run
    a_count: int
    b_count: int


def rebased_timeline(table: IterationTable) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (int64 ns) with each run moved to its own stretch of time, both sides by the
    same shift, so one `overlap_pairs` call pairs all runs without pairing across runs."""
    if not table.has_timestamps():
        raise ValueError(
            "the async duet pairs iterations by time, but some iterations lack start/end timestamps; "
            "re-run with a harness hook that records them, or analyze with the sequential method"
        )
    runs, inverse = np.unique(table.run, return_inverse=True)
    first = np.full(runs.size, np.iinfo(np.int64).max)
    last = np.full(runs.size, np.iinfo(np.int64).min)
    np.minimum.at(first, inverse, table.start_ns)
    np.maximum.at(last, inverse, table.end_ns)
    origin = np.concatenate(([0], np.cumsum(last - first + 1)[:-1]))
    shift = (origin - first)[inverse]
    return table.start_ns + shift, table.end_ns + shift


def aduet_pairs(measured: IterationTable, min_overlap_rate: float = 0.4) -> AduetPairs:
    """Pair the measured iterations of an async duet within runs (Drozdík 2023 §3.3.2)."""
    start, end = rebased_timeline(measured)
    is_a = measured.side == "A"
    is_b = measured.side == "B"
    pairs = overlap_pairs(start[is_a], end[is_a], start[is_b], end[is_b], min_overlap_rate=min_overlap_rate)
    pair_run = measured.run[is_a][pairs.a_index]
    order = np.argsort(pair_run, kind="stable")
    return AduetPairs(
        a_value=measured.value[is_a],
        b_value=measured.value[is_b],
        pairs=pairs.subset(order),
        pair_run=pair_run[order],
        a_count=int(is_a.sum()),
        b_count=int(is_b.sum()),
    )


def _hierarchical_log_ratio(
    log_ratio: np.ndarray, run: np.ndarray, robust: bool, cl: float, n_resamples: int, rng: np.random.Generator,
    interval: str = "t",
) -> tuple[RatioResult, int]:
    """Two-level bootstrap of the mean of per-run mean log ratios; `log_ratio` sorted by `run`.
    With interval="t" the t interval over the per-run means: a run's mean carries the variance of
    both levels (Kalibera & Jones 2013), and the run-level t keeps its level with few runs, where
    the two-level percentile bootstrap does not."""
    keep = robust_pair_filter(log_ratio) if robust and log_ratio.size else np.ones(log_ratio.size, dtype=np.bool_)
    lr, rr = log_ratio[keep], run[keep]
    _, lengths = np.unique(rr, return_counts=True)
    if lengths.size < 2:
        raise ValueError(f"the hierarchical estimator needs pairs from at least 2 runs, got {lengths.size}")
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    run_means = np.add.reduceat(lr, offsets) / lengths
    if interval == "t":
        return exp_interval(student_t(run_means, cl), cl, int(lengths.size)), int(log_ratio.size - keep.sum())
    dist = hierarchical_mean_distribution(lr, lengths, n_resamples=n_resamples, rng=rng)
    low, high = percentile_interval(dist, cl)
    estimate = float(run_means.mean())
    ratio = RatioResult(estimate=math.exp(estimate), low=math.exp(low), high=math.exp(high), confidence_level=cl, n=int(lengths.size))
    return ratio, int(log_ratio.size - keep.sum())


def _aduet_by_runs(
    m: IterationTable, bench: str, estimator: str, min_overlap_rate: float, robust: bool, cl: float,
    n_resamples: int, rng: np.random.Generator, interval: str = "t",
) -> tuple[RatioResult, tuple[str, ...]]:
    """The async duet over runs: what `compare("aduet", ..., a_run_ids=..., b_run_ids=...)` computes
    (tests check the equality), but pairing all runs with one `overlap_pairs` call instead of one
    per run — 20× fewer calls, which the slowdown study repeats for every s."""
    ap = aduet_pairs(m, min_overlap_rate)
    if len(ap.pairs) < 2:
        raise ValueError(
            f"{bench} (aduet): fewer than 2 iterations of A and B overlap by more than {min_overlap_rate:.0%}; "
            "were A and B really running at the same time (check the timestamps' clock and unit)?"
        )
    lr = np.log(ap.b_value[ap.pairs.b_index]) - np.log(ap.a_value[ap.pairs.a_index])
    if estimator == "hierarchical":
        ratio, removed = _hierarchical_log_ratio(lr, ap.pair_run, robust, cl, n_resamples, rng, interval)
    else:
        keep = robust_pair_filter(lr) if robust else np.ones(lr.size, dtype=np.bool_)
        removed = int(lr.size - keep.sum())
        ratio = aduet_ratio_ci(ap.a_value, ap.b_value, ap.pairs.subset(keep), run_ids=ap.pair_run[keep],
                               confidence_level=cl, n_resamples=n_resamples, random_state=rng,
                               interval="t" if interval == "t" else "bootstrap")
    unpaired_a = ap.a_count - np.unique(ap.pairs.a_index).size
    unpaired_b = ap.b_count - np.unique(ap.pairs.b_index).size
    notes = [
        (f"{len(ap.pairs)} overlap pairs (overlap rate > {min_overlap_rate:g}); {unpaired_a} of {ap.a_count} A "
         f"and {unpaired_b} of {ap.b_count} B iterations unpaired")
    ]
    if removed:
        notes.append(f"robust pair filter removed {removed} of {len(ap.pairs)} pairs")
    if interval == "bootstrap" and ratio.n < FEW_UNITS:
        notes.append(f"only {ratio.n} runs to resample: percentile bootstrap intervals come out too narrow "
                     f"with fewer than {FEW_UNITS}; measure more for a trustworthy CI")
    return ratio, tuple(notes)


def compare_group(
    group: IterationTable,
    method: str,
    *,
    estimator: Estimator = "run_means",
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    min_overlap_rate: float = 0.4,
    robust: bool = True,
    u_test: bool = True,
    interval: IntervalKind = "t",
) -> GroupResult:
    """B/A ratio CI, verdict and U test of one benchmark × method (rows from `IterationTable.groups()`).

    Warm-up rows are dropped first. Reuses `compare` for run_means and merged (and for the
    sequential hierarchical estimator); see the module docstring for the estimators.
    """
    bench = _check_group(group, method)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}; got {estimator!r}")
    cl = check_confidence_level(confidence_level)
    rng = as_generator(random_state)
    m = group.measured()
    a_all = m.value[m.side == "A"]
    b_all = m.value[m.side == "B"]
    if a_all.size < 2 or b_all.size < 2:
        raise ValueError(f"{bench} ({method}): needs at least 2 measured iterations per side, got {a_all.size} A and {b_all.size} B")
    check_interval(interval)
    run = functools.partial(compare, confidence_level=cl, n_resamples=n_resamples, random_state=rng, robust=robust,
                            u_test=False, interval=interval)
    notes: tuple[str, ...] = ()
    if method == "sequential":
        a_runs, b_runs = m.runs_of("A"), m.runs_of("B")
        if estimator == "run_means":
            res = run("sequential", [r.mean() for r in a_runs], [r.mean() for r in b_runs])
        elif estimator == "merged":
            res = run("sequential", a_all, b_all)
        else:
            res = run("sequential", a_runs, b_runs)
        ratio, runs, notes = res.ratio, min(len(a_runs), len(b_runs)), res.notes
    elif method == "duet":
        a_runs, b_runs = paired_runs(m)
        if not a_runs:
            raise ValueError(f"{bench} (duet): no iteration of A has a B partner with the same run and index")
        if estimator == "run_means":
            res = run("duet", a_runs, b_runs)
            ratio, notes = res.ratio, res.notes
        elif estimator == "merged":
            res = run("duet", np.concatenate(a_runs), np.concatenate(b_runs))
            ratio, notes = res.ratio, res.notes
        else:
            lr = np.log(np.concatenate(b_runs)) - np.log(np.concatenate(a_runs))
            run_of = np.repeat(np.arange(len(a_runs)), [r.size for r in a_runs])
            ratio, removed = _hierarchical_log_ratio(lr, run_of, robust, cl, n_resamples, rng, interval)
            notes = (f"robust pair filter removed {removed} pairs",) if removed else ()
        runs = len(a_runs)
    elif method == "aduet":
        if estimator == "merged":
            start, end = rebased_timeline(m)
            ia, ib = m.side == "A", m.side == "B"
            res = run(
                "aduet", a_all, b_all, a_start=start[ia], a_end=end[ia], b_start=start[ib], b_end=end[ib],
                min_overlap_rate=min_overlap_rate,
            )
            ratio, notes = res.ratio, res.notes
        else:
            ratio, notes = _aduet_by_runs(m, bench, estimator, min_overlap_rate, robust, cl, n_resamples, rng,
                                          interval)
        runs = int(np.intersect1d(m.run[m.side == "A"], m.run[m.side == "B"]).size)
    else:
        raise ValueError(f"unknown method {method!r}; use sequential, duet or aduet")
    return GroupResult(
        benchmark=bench,
        method=method,
        estimator=estimator,
        ratio=ratio,
        verdict=verdict(ratio.low, ratio.high),
        u_test_p=mann_whitney_u(a_all, b_all).pvalue if u_test else float("nan"),
        relative_ci_width=relative_ci_width(ratio.low, ratio.high, ratio.estimate),
        runs=runs,
        iterations=int(a_all.size + b_all.size),
        notes=tuple(notes),
    )
