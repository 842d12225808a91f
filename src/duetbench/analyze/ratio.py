"""Confidence intervals of B relative to A: the duet ratio, the ratio and the difference of means.

Ratios are B/A throughout: > 1 means B is slower. Geometric means are computed as means of
logarithms, and percentile intervals are taken on the log scale and exponentiated: the same
interval (percentiles commute with monotone maps, up to interpolation between neighbouring
replicates), without overflow or underflow in products of many ratios.
"""
from __future__ import annotations

# bootstrap.py (with numpy.random, threadpoolctl and statistics: ~25-35 ms to import on a 2-vCPU AMD
# EPYC VM) is imported where a bootstrap is drawn: a duet's report uses the t interval and needs none
# (issue 17: the report's imports are on the path of a fixed-count comparison).
import math
from typing import Literal

import msgspec
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._inputs import (
    FloatArray,
    RandomState,
    Runs,
    RunsLike,
    as_generator,
    as_runs,
    as_sample,
    check_confidence_level,
    check_n_resamples,
    check_random_state,
)
from .interval import Interval, fieller_ratio, student_t, welch_difference
from .quantile import median

#: "t": the Student-t family of `interval` (default: keeps its level at small n); "bootstrap": the
#: papers' percentile bootstrap (Bulej et al. 2020 §3), kept for reproducing them and for large n.
#: "anytime": the confidence sequence of `interval` (only `comparison.compare` makes it; it is what a
#: comparison reports after stopping because a difference became evident, `analyze.monitor`).
#: "t-stopped": the t family at level 1 − α/2, labelled 1 − α: what a comparison reports after its
#: adaptive stop ended it on precision (`analyze.monitor`).
IntervalKind = Literal["t", "bootstrap", "anytime", "t-stopped"]
INTERVALS: tuple[str, ...] = ("t", "bootstrap", "anytime", "t-stopped")

#: Scales the median absolute deviation to the standard deviation of a normal distribution.
MAD_TO_SIGMA = 1.4826


class RatioResult(msgspec.Struct, frozen=True):
    """A B/A ratio with its CI; `n` is the number of units the interval is over (runs, or pairs when
    each pair is its own run; min(n_a, n_b) runs for the sequential method); `interval` says how it
    was made: "t" (Student-t family, `analyze.interval`), "bootstrap" (percentile bootstrap),
    "anytime" (a confidence sequence, valid however the stopping looked at the data) or "mover" (two
    ratios' intervals combined by `ratio_of_ratios`)."""

    estimate: float
    low: float
    high: float
    confidence_level: float
    n: int
    interval: str = "bootstrap"


class DifferenceResult(msgspec.Struct, frozen=True):
    """mean(B) − mean(A) with its CI, absolute and relative to mean(A)."""

    estimate: float
    low: float
    high: float
    relative_estimate: float
    relative_low: float
    relative_high: float
    confidence_level: float
    n_a: int
    n_b: int


def exp_bound(x: float) -> float:
    """exp of a log-scale bound; inf past the float range: a t interval over two or three very different
    log ratios (or at a level near 1) reaches beyond e^709, which is an unbounded end, not an error."""
    return math.exp(x) if x < 709.0 else math.inf


def _log(x: float) -> float:
    # Fieller's interval may reach 0 or infinity (an unbounded side): their logs are -inf and inf.
    return math.log(x) if x > 0 else -math.inf


def ratio_of_ratios(x: RatioResult, y: RatioResult) -> RatioResult:
    """X/Y from the ratios X/R and Y/R of two independent comparisons with the same reference R (the
    commands of ``duet compare R X Y``, each measured against R): estimate x/y, and an interval combining
    both intervals by MOVER, the method of variance estimates recovery (Zou & Donner 2008, Statistics in
    Medicine 27(10):1693–1702), on the log scale: each side of the difference log x − log y gets the
    root sum of squares of the two distances that bound it (x's lower and y's upper for the lower end).
    It keeps asymmetric intervals (Fieller's) asymmetric, gives x's own interval when y is exact (y = R:
    1 with no width), and with two symmetric normal intervals it is the exact interval of the
    difference. The level is the intervals' (they share it); a wider interval than a direct comparison
    of X and Y would give, since two comparisons' noise adds up."""
    est_x, est_y = _log(x.estimate), _log(y.estimate)
    estimate = est_x - est_y
    low = estimate - math.hypot(est_x - _log(x.low), _log(y.high) - est_y)
    high = estimate + math.hypot(_log(x.high) - est_x, est_y - _log(y.low))
    return RatioResult(estimate=exp_bound(estimate), low=exp_bound(low), high=exp_bound(high),
                       confidence_level=x.confidence_level, n=min(x.n, y.n), interval="mover")


def check_interval(interval: str) -> str:
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {', '.join(INTERVALS)}; got {interval!r}")
    return interval


def exp_interval(iv: Interval, cl: float, n: int, kind: str = "t") -> RatioResult:
    """A log-scale interval as a ratio."""
    return RatioResult(estimate=exp_bound(iv.estimate), low=exp_bound(iv.low), high=exp_bound(iv.high),
                       confidence_level=cl, n=n, interval=kind)


def _exp_ci(log_units: FloatArray, cl: float, n_resamples: int, random_state: RandomState,
            interval: str = "bootstrap") -> RatioResult:
    check_random_state(random_state)
    if interval == "t":
        return exp_interval(student_t(log_units, cl), cl, int(log_units.size))
    from .bootstrap import bootstrap_distribution, percentile_interval

    dist = bootstrap_distribution((log_units,), np.mean, n_resamples=n_resamples, rng=as_generator(random_state))
    low, high = percentile_interval(dist, cl)
    return RatioResult(
        estimate=exp_bound(float(log_units.mean())),
        low=exp_bound(low),
        high=exp_bound(high),
        confidence_level=cl,
        n=int(log_units.size),
    )


def paired_log_ratios(
    a: RunsLike, b: RunsLike, *, names: tuple[str, str] = ("a", "b")
) -> tuple[Runs, Runs, FloatArray]:
    """Validate paired A/B times; return both run structures and log(b/a) for every pair —
    the speedup samples s_(r,i) of Bulej et al. 2020 §3 step 2, as B/A and in logs."""
    na, nb = names
    ra = as_runs(a, na)
    rb = as_runs(b, nb)
    if ra.flat != rb.flat:
        raise ValueError(f"{na} and {nb} must have the same shape: both flat (one pair per run) or both per-run arrays")
    if ra.count != rb.count:
        unit = "values" if ra.flat else "runs"
        raise ValueError(f"{na} and {nb} must be paired: {na} has {ra.count} {unit}, {nb} has {rb.count}")
    if not np.array_equal(ra.lengths, rb.lengths):
        r = int(np.flatnonzero(ra.lengths != rb.lengths)[0])
        raise ValueError(
            f"{na} and {nb} must be paired iteration by iteration: "
            f"run {r} has {ra.lengths[r]} iterations in {na}, {rb.lengths[r]} in {nb}"
        )
    return ra, rb, np.log(rb.values) - np.log(ra.values)


def duet_ratio_ci(
    a: RunsLike,
    b: RunsLike,
    *,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    interval: IntervalKind = "t",
) -> RatioResult:
    """CI of the B/A ratio from a synchronous duet — Bulej et al. 2020 §3.

    `a`, `b`: 1-D arrays of paired times (each pair its own run, s_r = b_r/a_r), or sequences of
    per-run arrays paired iteration by iteration (runs may differ in length). Per run the
    geometric mean gms_r of the pair ratios; estimate = grand geometric mean ggms over runs;
    interval="t" (default): Student-t interval of the mean of log gms_r (`interval.student_t`),
    which keeps its level at few runs; "bootstrap": the paper's percentile bootstrap over the gms_r.
    The paper writes x/y; we report B/A so > 1 is slower.
    """
    cl = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    check_interval(interval)
    runs, _, log_ratio = paired_log_ratios(a, b)
    log_gms = runs.run_means(log_ratio)
    return _exp_ci(log_gms, cl, n_resamples, random_state, interval)


def _runs_of_means(runs: Runs) -> bool:
    """True when the runs are single values, so the hierarchical bootstrap is the ordinary one."""
    return runs.flat or bool((runs.lengths == 1).all())


def _mean_distribution(runs: Runs, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    if _runs_of_means(runs):
        return _run_means_distribution(runs, n_resamples, rng)
    from .bootstrap import hierarchical_mean_distribution

    return hierarchical_mean_distribution(runs.values, runs.lengths, n_resamples=n_resamples, rng=rng)


def _ratio_result(ra: Runs, rb: Runs, dist_a: FloatArray, dist_b: FloatArray, cl: float) -> RatioResult:
    from .bootstrap import percentile_interval

    low, high = percentile_interval(dist_b / dist_a, cl)
    estimate = float(rb.run_means().mean() / ra.run_means().mean())
    return RatioResult(estimate=estimate, low=low, high=high, confidence_level=cl, n=min(ra.count, rb.count))


def _difference_result(ra: Runs, rb: Runs, dist_a: FloatArray, dist_b: FloatArray, cl: float) -> DifferenceResult:
    from .bootstrap import percentile_interval

    low, high = percentile_interval(dist_b - dist_a, cl)
    base = float(ra.run_means().mean())
    estimate = float(rb.run_means().mean()) - base
    return DifferenceResult(
        estimate=estimate,
        low=low,
        high=high,
        relative_estimate=estimate / base,
        relative_low=low / base,
        relative_high=high / base,
        confidence_level=cl,
        n_a=ra.count,
        n_b=rb.count,
    )


def _run_means_distribution(runs: Runs, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    from .bootstrap import bootstrap_distribution

    return bootstrap_distribution((runs.run_means(),), np.mean, n_resamples=n_resamples, rng=rng)


def _fieller_result(ra: Runs, rb: Runs, cl: float) -> RatioResult:
    # Runs are the independent units (Kalibera & Jones 2013): their means carry the variance of
    # both levels, so the run-level interval is also the honest one for per-run arrays.
    iv = fieller_ratio(ra.run_means(), rb.run_means(), cl)
    return RatioResult(estimate=iv.estimate, low=iv.low, high=iv.high, confidence_level=cl,
                       n=min(ra.count, rb.count), interval="t")


def _welch_result(ra: Runs, rb: Runs, cl: float) -> DifferenceResult:
    iv = welch_difference(ra.run_means(), rb.run_means(), cl)
    base = float(ra.run_means().mean())
    return DifferenceResult(
        estimate=iv.estimate, low=iv.low, high=iv.high, relative_estimate=iv.estimate / base,
        relative_low=iv.low / base, relative_high=iv.high / base, confidence_level=cl, n_a=ra.count, n_b=rb.count,
    )


def ratio_of_means_ci(
    a: RunsLike,
    b: RunsLike,
    *,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    interval: IntervalKind = "t",
) -> RatioResult:
    """CI of mean(B)/mean(A) for the sequential method (independent, randomly interleaved runs).

    docs/methods.md "Sequential (standard method)", after Kalibera & Jones: with 1-D inputs (one value
    per run) an ordinary bootstrap of each mean; with per-run arrays a hierarchical bootstrap
    (runs, then iterations within each drawn run) of the mean of run means. A and B are
    resampled independently and the replicate ratios mean(B*)/mean(A*) give the percentile CI.
    interval="t" (default): Fieller's interval over run means with Welch's degrees of freedom
    (`interval.fieller_ratio`), which keeps its level at few runs. `n` is min(n_a, n_b) runs.
    """
    cl = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    ra = as_runs(a, "a")
    rb = as_runs(b, "b")
    if check_interval(interval) == "t":
        return _fieller_result(ra, rb, cl)
    rng = as_generator(random_state)
    return _ratio_result(ra, rb, _mean_distribution(ra, n_resamples, rng), _mean_distribution(rb, n_resamples, rng), cl)


def difference_of_means_ci(
    a: RunsLike,
    b: RunsLike,
    *,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    interval: IntervalKind = "t",
) -> DifferenceResult:
    """CI of mean(B) − mean(A) over run means, also relative to mean(A).

    The "standard method" of Bulej et al. 2020 §4.1 (bootstrap CI for the difference
    of means, random interleaving). Per-run arrays are first reduced to run means ("run means"
    sampling, Drozdík 2023 §4.3.2); A and B run means are resampled independently.
    The paper divides by the mean of all samples because its runs are A/A; for A/B we divide by
    mean(A), so the relative figures read as "fraction of the baseline". interval="t" (default):
    Welch's interval over run means (`interval.welch_difference`); "bootstrap": the paper's.
    """
    cl = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    ra = as_runs(a, "a")
    rb = as_runs(b, "b")
    if check_interval(interval) == "t":
        return _welch_result(ra, rb, cl)
    rng = as_generator(random_state)
    dist_a = _run_means_distribution(ra, n_resamples, rng)
    dist_b = _run_means_distribution(rb, n_resamples, rng)
    return _difference_result(ra, rb, dist_a, dist_b, cl)


def sequential_cis(
    a: RunsLike,
    b: RunsLike,
    *,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    interval: IntervalKind | str = "t",
) -> tuple[RatioResult, DifferenceResult]:
    """`ratio_of_means_ci` and `difference_of_means_ci` of the same data, as the sequential method
    reports them (Bulej et al. 2020 §4.1; docs/methods.md).

    When both resample run means (1-D inputs, or runs of one iteration each) they are two
    functionals of one bootstrap, so A's and B's replicates are drawn once and serve both: half the
    resampling, and the two intervals agree with each other replicate by replicate. With
    interval="t" (default): Fieller's ratio and Welch's difference over run means.
    """
    cl = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    ra = as_runs(a, "a")
    rb = as_runs(b, "b")
    if check_interval(interval) == "t":
        return _fieller_result(ra, rb, cl), _welch_result(ra, rb, cl)
    rng = as_generator(random_state)
    dist_a = _run_means_distribution(ra, n_resamples, rng)
    dist_b = _run_means_distribution(rb, n_resamples, rng)
    difference = _difference_result(ra, rb, dist_a, dist_b, cl)
    if not _runs_of_means(ra):
        dist_a = _mean_distribution(ra, n_resamples, rng)
    if not _runs_of_means(rb):
        dist_b = _mean_distribution(rb, n_resamples, rng)
    return _ratio_result(ra, rb, dist_a, dist_b, cl), difference


def robust_pair_filter(
    log_ratios: ArrayLike,
    *,
    k: float = 5.0,
    floor: float = 0.005,
    max_fraction: float = 0.10,
) -> NDArray[np.bool_]:
    """Keep-mask dropping isolated pair outliers of a duet. OUR OWN EXTENSION, not from the papers.

    Why: on a 2-vCPU VM a duet leaves no spare CPU, so whatever wakes (the orchestrator, kernel
    threads, another job) lands on one side only and shifts single pair ratios by ±5–15%;
    the ratio does not cancel such asymmetric noise (docs/notes/duet_on_2cpus.md, point 1).
    Rule: drop a pair when |log_ratio − median| > max(k · 1.4826 · MAD, floor). The MAD
    scaling makes k "standard deviations" for normal noise, so clean data loses ~nothing
    (k = 5: about 6 in 10 million pairs); `floor` (log units, 0.005 ≈ 0.5%) keeps very quiet
    data from having sub-percent wobbles called outliers. At most floor(max_fraction · n) pairs
    are dropped, the most extreme first, so the filter can trim a tail but never rewrite the
    sample; below 1/max_fraction pairs (10 by default) it removes nothing.
    """
    lr = as_sample(log_ratios, "log_ratios")
    if not k > 0:
        raise ValueError(f"k must be > 0, got {k}")
    if not floor >= 0:
        raise ValueError(f"floor must be >= 0, got {floor}")
    if not 0.0 <= max_fraction < 1.0:
        raise ValueError(f"max_fraction must lie in [0, 1), got {max_fraction}")
    keep = np.ones(lr.size, dtype=np.bool_)
    cap = int(math.floor(max_fraction * lr.size))
    if cap == 0:
        return keep
    deviation = np.abs(lr - median(lr))
    limit = max(k * MAD_TO_SIGMA * median(deviation), floor)
    outliers = np.flatnonzero(deviation > limit)
    if outliers.size > cap:
        most_extreme_first = np.argsort(-deviation[outliers], kind="stable")
        outliers = outliers[most_extreme_first[:cap]]
    keep[outliers] = False
    return keep
