"""Minimal detectable slowdown — Drozdík 2023 §4.4 and §5.2.4, after Laaber et al.

An A/A measurement is turned into A/B measurements with a known slowdown s by multiplying every B
iteration's time by (1 + s); for the async duet B's timestamps are recomputed keeping the gaps
between iterations, so the overlaps (and so the pairs) change as they would have. Then the CI
test and the Mann–Whitney U test run again. The curve over s, across a campaign's benchmarks, is
the share still judged "equal" (thesis Figure 5.8/5.9).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import msgspec
import numpy as np
from numpy.typing import ArrayLike

from duetbench.model.table import NO_TIME, IterationTable

from ._inputs import RandomState
from .api import AnalysisOptions, analyze_group
from .bootstrap import mean_cis
from .interval import t_quantile
from .pairing import aduet_pairs
from .ratio import IntervalKind, RatioResult, robust_pair_filter

DEFAULT_SLOWDOWNS = np.round(np.arange(0.0, 0.151, 0.01), 10)


def slow_down(table: IterationTable, factor: float) -> IterationTable:
    """B's iterations `factor` times longer; B's timestamps recomputed per run keeping the gaps.

    Iteration k of a run then starts later by the extra time of iterations 0..k−1 of the same run
    and side (warm-ups included: they occupy the machine too). The seed-004 §4.4 adjustment.
    Rows without timestamps keep NO_TIME.
    """
    if not factor > 0:
        raise ValueError(f"slowdown factor must be > 0, got {factor}")
    value = table.value.copy()
    start = table.start_ns.copy()
    end = table.end_ns.copy()
    is_b = np.flatnonzero(table.side == "B")
    value[is_b] *= factor
    timed = is_b[(table.start_ns[is_b] != NO_TIME) & (table.end_ns[is_b] != NO_TIME)]
    if timed.size:
        bench = np.unique(table.benchmark[timed], return_inverse=True)[1]
        meth = np.unique(table.method[timed], return_inverse=True)[1]
        run = table.run[timed]
        sort = np.lexsort((table.start_ns[timed], run, meth, bench))
        order = timed[sort]
        key = np.stack([bench[sort], meth[sort], run[sort]])
        new_start_of_group = np.r_[True, np.any(np.diff(key, axis=1) != 0, axis=0)]
        dur = table.end_ns[order] - table.start_ns[order]
        new_dur = np.maximum(np.rint(dur * factor).astype(np.int64), 1)
        extra = new_dur - dur
        total = np.cumsum(extra)
        before = total - extra  # extra time of all earlier rows in the sorted order
        group_first = np.flatnonzero(new_start_of_group)
        sizes = np.diff(np.r_[group_first, order.size])
        shift = before - np.repeat(before[group_first], sizes)
        start[order] = table.start_ns[order] + shift
        end[order] = start[order] + new_dur
    return msgspec.structs.replace(table, value=value, start_ns=start, end_ns=end)


@dataclass(frozen=True)
class SlowdownResult:
    """Per injected slowdown s: the ratio CI, and whether each test still judges A and B equal."""

    benchmark: str
    method: str
    estimator: str
    slowdowns: np.ndarray
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    ci_equal: np.ndarray  # CI straddles 1 ("no difference")
    u_test_p: np.ndarray
    u_equal: np.ndarray  # p >= alpha
    alpha: float

    @property
    def ci_detects(self) -> np.ndarray:
        return ~self.ci_equal

    @property
    def u_detects(self) -> np.ndarray:
        return ~self.u_equal

    @property
    def mds_ci(self) -> float | None:
        """Smallest s from which the CI test detects every larger s of the grid (None: never)."""
        return _minimal(self.slowdowns, self.ci_detects)

    @property
    def mds_u(self) -> float | None:
        return _minimal(self.slowdowns, self.u_detects)


def _minimal(s: np.ndarray, detects: np.ndarray) -> float | None:
    if not detects[-1]:
        return None
    missed = np.flatnonzero(~detects)
    first = 0 if missed.size == 0 else int(missed[-1]) + 1
    return float(s[first])


def _seed_sequence(random_state: RandomState) -> np.random.SeedSequence:
    """A seed to restart the same random stream for every slowdown (common random numbers)."""
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    return np.random.SeedSequence(random_state)


def _u_pvalues(a: np.ndarray, b: np.ndarray, factors: np.ndarray) -> np.ndarray:
    from scipy.stats import mannwhitneyu  # deferred: importing scipy.stats costs ~0.3 s

    # One call for every slowdown: scipy broadcasts A (1 × n) against B·(1+s) (S × m).
    res = mannwhitneyu(a[None, :], b[None, :] * factors[:, None], alternative="two-sided", axis=1)
    return np.asarray(res.pvalue, dtype=np.float64)


def aduet_run_units(group: IterationTable, factors: np.ndarray, min_overlap_rate: float, robust: bool
                    ) -> np.ndarray | None:
    """Per slowdown factor (rows), each run's mean log ratio B/A over its overlap pairs (columns): the
    units the async duet's run-means CI resamples (`estimators.run_means`, Drozdík 2023 §4.3.2), with
    B's timestamps recomputed (`slow_down`) and the pairs found again for every factor.

    None when the factors do not all leave the same runs with pairs (or fewer than 2 runs or pairs):
    the rows would not be the same units, and each factor is then judged on its own."""
    runs_seen: np.ndarray | None = None
    rows = []
    for f in factors:
        ap = aduet_pairs(slow_down(group, float(f)).measured(), min_overlap_rate)
        if len(ap.pairs) < 2:
            return None
        lr = np.log(ap.b_value[ap.pairs.b_index]) - np.log(ap.a_value[ap.pairs.a_index])
        keep = robust_pair_filter(lr) if robust else np.ones(lr.size, dtype=np.bool_)
        runs, unit = np.unique(ap.pair_run[keep], return_inverse=True)
        if runs.size < 2 or (runs_seen is not None and not np.array_equal(runs, runs_seen)):
            return None
        runs_seen = runs
        rows.append(np.bincount(unit, weights=lr[keep]) / np.bincount(unit))
    return np.array(rows)


def minimal_detectable_slowdown(
    group: IterationTable,
    method: str,
    slowdowns: ArrayLike = DEFAULT_SLOWDOWNS,
    *,
    estimator: str = "run-means",
    alpha: float = 0.05,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    min_overlap_rate: float = 0.4,
    robust: bool = True,
    interval: IntervalKind = "t",
) -> SlowdownResult:
    """Re-run the CI test and the U test of one A/A benchmark × method with B slowed by each s.

    Every s uses the same bootstrap random numbers (common random numbers), so the curve moves
    only because the data moved. For the sync duet and the sequential method this makes the CI
    at s exactly the CI at 0 multiplied by (1 + s): their bootstrap statistics are a mean of log
    ratios (shifted by log(1+s)) or a ratio of means (scaled by 1+s), the robust filter's
    decisions are shift-invariant and percentiles commute with the shift — so they are computed
    once and scaled (tests check this against recomputation). The async duet is recomputed for
    every s, since its pairs change; with the run-means estimator its units (per-run mean log ratios)
    are found for every s and bootstrapped together (`mean_cis`: all rows share one set of resamples,
    which is what common random numbers ask for), else one `api.analyze_group` per s.
    """
    s = np.asarray(slowdowns, dtype=np.float64)
    if s.ndim != 1 or s.size == 0 or not np.all(s > -1.0):
        raise ValueError("slowdowns must be a non-empty 1-D array of values > -1 (e.g. 0, 0.01, ..., 0.15)")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha}")
    factors = 1.0 + s
    seed = _seed_sequence(random_state)
    opts = AnalysisOptions(estimator=estimator, confidence_level=confidence_level, n_resamples=n_resamples,
                           min_overlap_rate=min_overlap_rate, robust=robust, u_test=False, interval=interval)

    def ci(table: IterationTable) -> RatioResult:
        # Every s with the same random numbers (common random numbers).
        row = analyze_group(table, method, msgspec.structs.replace(opts, seed=np.random.default_rng(seed)))
        assert row.result is not None  # analyze_group raises instead
        return row.result.ratio

    if method in ("duet", "sequential"):
        base = ci(group)
        est = base.estimate * factors
        low = base.low * factors
        high = base.high * factors
        bench = str(group.benchmark[0])
    elif estimator == "run-means" and (units := aduet_run_units(group, factors, min_overlap_rate, robust)) is not None:
        if interval == "t":
            # The t interval of each row's mean, as the run-means estimator makes it (`interval.student_t`).
            n = units.shape[1]
            mean = units.mean(axis=1)
            half = t_quantile(confidence_level, n - 1) * units.std(axis=1, ddof=1) / np.sqrt(n)
            est, low, high = np.exp(mean), np.exp(mean - half), np.exp(mean + half)
        else:
            cis = mean_cis(units, confidence_level=confidence_level, n_resamples=n_resamples,
                           random_state=np.random.default_rng(seed))
            est, low, high = np.exp(cis.estimate), np.exp(cis.low), np.exp(cis.high)
        bench = str(group.benchmark[0])
    else:
        results = [ci(slow_down(group, f)) for f in factors]
        est = np.array([r.estimate for r in results])
        low = np.array([r.low for r in results])
        high = np.array([r.high for r in results])
        bench = str(group.benchmark[0])
    m = group.measured()
    p = _u_pvalues(m.value[m.side == "A"], m.value[m.side == "B"], factors)
    return SlowdownResult(
        benchmark=bench,
        method=method,
        estimator=estimator,
        slowdowns=s,
        estimate=est,
        low=low,
        high=high,
        ci_equal=(low <= 1.0) & (high >= 1.0),
        u_test_p=p,
        u_equal=p >= alpha,
        alpha=alpha,
    )


@dataclass(frozen=True)
class SlowdownCurve:
    """Share of a campaign's benchmarks still judged equal at each slowdown (Drozdík 2023 Fig. 5.8/5.9)."""

    method: str
    estimator: str
    slowdowns: np.ndarray
    share_equal_ci: np.ndarray
    share_equal_u: np.ndarray
    benchmarks: int


def slowdown_curves(results: Iterable[SlowdownResult]) -> dict[str, SlowdownCurve]:
    """One curve per method, over the benchmarks' `SlowdownResult`s (all on the same grid)."""
    by_method: dict[str, list[SlowdownResult]] = {}
    for r in results:
        by_method.setdefault(r.method, []).append(r)
    curves: dict[str, SlowdownCurve] = {}
    for method, rs in by_method.items():
        grid = rs[0].slowdowns
        if any(not np.array_equal(r.slowdowns, grid) for r in rs):
            raise ValueError(f"{method}: the benchmarks' slowdown grids differ; compute them on one grid")
        curves[method] = SlowdownCurve(
            method=method,
            estimator=rs[0].estimator,
            slowdowns=grid,
            share_equal_ci=np.mean([r.ci_equal for r in rs], axis=0),
            share_equal_u=np.mean([r.u_equal for r in rs], axis=0),
            benchmarks=len(rs),
        )
    return curves


__all__ = ["DEFAULT_SLOWDOWNS", "SlowdownCurve", "SlowdownResult", "minimal_detectable_slowdown", "slow_down",
           "slowdown_curves"]
