"""The papers' method studies on any campaign (issue 4 item 2): pure functions, frozen results.

- `aa_false_positive_rate`   share of A/A benchmarks with a verdict other than "no difference"
                             (Drozdík 2023 §5.2.3, Figures 5.6/5.7);
- `minimal_detectable_slowdown`, `slowdown_curves`  (slowdown.py; Drozdík 2023 §4.4, §5.2.4);
- `shuffle_analysis`         (shuffle.py; Bulej et al. 2020 §4.2);
- `runtime_saving`           Drozdík 2023 §5.2.1, eq. 5.1;
- `overlap_statistics`       Drozdík 2023 §5.2.2, eq. 5.2;
- `ci_width_reduction`       Bulej et al. 2020 Table 1;
- `run_studies`              all of them on one table, as `bench/analysis.py` times them.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from duetbench.model.method import METHODS, PAIRED_METHODS
from duetbench.model.table import NO_TIME, IterationTable

from .api import AnalysisOptions, AnalysisRow, analyze_group
from .pairing import aduet_pairs
from .shuffle import ShuffleResult, shuffle_analysis, shuffle_summary
from .slowdown import (
    DEFAULT_SLOWDOWNS,
    SlowdownCurve,
    SlowdownResult,
    minimal_detectable_slowdown,
    slowdown_curves,
)


# -- inputs ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Judged:
    benchmark: str
    method: str
    verdict: str
    u_test_p: float
    relative_ci_width: float


def _judged(results: Iterable[Any]) -> list[_Judged]:
    """Accept rows with `.benchmark`, `.method` and `.result` (a `ComparisonResult`, None for a benchmark that
    could not be analyzed: skipped), such as `duet analyze`'s `AnalysisRow`s."""
    out: list[_Judged] = []
    for r in results:
        res = getattr(r, "result", r)
        if res is None:
            continue
        out.append(_Judged(str(r.benchmark), str(r.method), str(res.verdict), float(res.u_test_p),
                           float(res.relative_ci_width)))
    return out


# -- A/A false positives ------------------------------------------------------------------------------
@dataclass(frozen=True)
class FalsePositiveRate:
    """A/A false alarms of one method: CI test and U test, with a 95% Clopper–Pearson interval."""

    method: str
    benchmarks: int
    ci_alarms: int
    ci_rate: float
    ci_rate_low: float
    ci_rate_high: float
    u_alarms: int
    u_rate: float
    alpha: float


def aa_false_positive_rate(results: Iterable[Any], *, alpha: float = 0.05) -> dict[str, FalsePositiveRate]:
    """Per method, the share of A/A benchmarks whose CI verdict is not "no difference" and whose
    U test has p < `alpha` — Drozdík 2023 §5.2.3 (there as "A/A detection accuracy" = 1 − rate)."""
    from scipy.stats import binomtest  # deferred: importing scipy.stats costs ~0.3 s

    by_method: dict[str, list[_Judged]] = {}
    for r in _judged(results):
        by_method.setdefault(r.method, []).append(r)
    out: dict[str, FalsePositiveRate] = {}
    for method, rs in by_method.items():
        n = len(rs)
        ci = sum(r.verdict != "no difference" for r in rs)
        u = sum(bool(r.u_test_p < alpha) for r in rs)
        interval = binomtest(ci, n).proportion_ci(confidence_level=0.95)
        out[method] = FalsePositiveRate(
            method=method, benchmarks=n, ci_alarms=ci, ci_rate=ci / n, ci_rate_low=float(interval.low),
            ci_rate_high=float(interval.high), u_alarms=u, u_rate=u / n, alpha=alpha,
        )
    return out


# -- runtime saving ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RuntimeSaving:
    """Mean machine time per run and per benchmark: sequential (A span + B span) against a duet
    (latest end − earliest start of both sides); nan where a benchmark lacks the method."""

    benchmarks: tuple[str, ...]
    sequential_s: np.ndarray
    duet_s: np.ndarray
    aduet_s: np.ndarray

    def speedup(self, method: str) -> np.ndarray:
        """mean(runtime_seqn) / mean(runtime_duet) per benchmark: Drozdík 2023 eq. 5.1."""
        return self.sequential_s / self._of(method)

    def saving(self, method: str) -> np.ndarray:
        """Share of the sequential machine time the duet saves: 1 − 1/speedup."""
        return 1.0 - self._of(method) / self.sequential_s

    def median_speedup(self, method: str) -> float:
        v = self.speedup(method)
        return float(np.median(v[np.isfinite(v)])) if np.isfinite(v).any() else math.nan

    def median_saving(self, method: str) -> float:
        v = self.saving(method)
        return float(np.median(v[np.isfinite(v)])) if np.isfinite(v).any() else math.nan

    def _of(self, method: str) -> np.ndarray:
        if method not in PAIRED_METHODS:
            raise ValueError(f"runtime saving compares a duet method (duet, aduet) with sequential, got {method!r}")
        return self.duet_s if method == "duet" else self.aduet_s


def runtime_saving(table: IterationTable) -> RuntimeSaving:
    """Runtime saving of the duets over sequential — Drozdík 2023 §5.2.1.

    From raw timestamps, warm-ups included (the thesis: "raw measurements"): per run the
    sequential runtime is (end − start of A) + (end − start of B), a duet's is max(end) −
    min(start) over both sides (the thesis prints min(start) − max(end), a sign slip). Runtimes
    are averaged over runs per benchmark. Rows without timestamps are ignored. Vectorized over
    the whole table: one sort, then reductions over contiguous blocks.
    """
    timed = (table.start_ns != NO_TIME) & (table.end_ns != NO_TIME)
    names, bench = np.unique(table.benchmark, return_inverse=True)
    meth = np.select([table.method == m for m in METHODS], list(range(len(METHODS))), -1)
    side = (table.side == "B").astype(np.int64)
    sel = np.flatnonzero(timed & (meth >= 0))
    order = sel[np.lexsort((side[sel], table.run[sel], meth[sel], bench[sel]))]
    key = np.stack([bench[order], meth[order], table.run[order], side[order]])
    # No timed row at all (an import without timestamps): no block starts anywhere.
    first = (np.flatnonzero(np.r_[True, np.any(np.diff(key, axis=1) != 0, axis=0)]) if order.size
             else np.empty(0, np.int64))
    start = np.minimum.reduceat(table.start_ns[order], first) if order.size else np.empty(0, np.int64)
    end = np.maximum.reduceat(table.end_ns[order], first) if order.size else np.empty(0, np.int64)
    k = key[:, first]  # one column per (benchmark, method, run, side)
    n_bench = names.size
    result: dict[str, np.ndarray] = {}
    for mi, method in enumerate(METHODS):
        cols = k[1] == mi
        b, run, s0, e0 = k[0, cols], k[2, cols], start[cols], end[cols]
        # Per (benchmark, run): both sides are adjacent after the sort.
        unit_first = np.flatnonzero(np.r_[True, (np.diff(b) != 0) | (np.diff(run) != 0)])
        if method == "sequential":
            per_run = np.add.reduceat((e0 - s0).astype(np.float64), unit_first) if b.size else np.empty(0)
        else:
            per_run = ((np.maximum.reduceat(e0, unit_first) - np.minimum.reduceat(s0, unit_first)).astype(np.float64)
                       if b.size else np.empty(0))
        unit_bench = b[unit_first] if b.size else np.empty(0, np.int64)
        total = np.bincount(unit_bench, weights=per_run, minlength=n_bench)
        count = np.bincount(unit_bench, minlength=n_bench)
        with np.errstate(invalid="ignore", divide="ignore"):
            result[method] = np.where(count > 0, total / np.maximum(count, 1), np.nan) / 1e9
    return RuntimeSaving(
        benchmarks=tuple(str(n) for n in names),
        sequential_s=result["sequential"],
        duet_s=result["duet"],
        aduet_s=result["aduet"],
    )


# -- overlap statistics --------------------------------------------------------------------------------
DEFAULT_OVERLAP_RATES = np.round(np.arange(0.0, 1.0, 0.1), 10)


@dataclass(frozen=True)
class OverlapStatistics:
    """Async duet overlaps of one benchmark as a function of the minimum overlap rate m."""

    benchmark: str
    m: np.ndarray
    relative_overlap_time: np.ndarray  # Drozdík 2023 eq. 5.2, in [0, 1]
    pairs: np.ndarray  # number of pairs with rate > m
    paired_share_a: np.ndarray  # share of A iterations in at least one pair
    paired_share_b: np.ndarray


def overlap_statistics(group: IterationTable, m: ArrayLike = DEFAULT_OVERLAP_RATES) -> OverlapStatistics:
    """Relative overlap time against m — Drozdík 2023 §5.2.2, eq. 5.2.

    relative_overlap_time(m) = Σ over pairs with overlap rate > m of 2·overlap / Σ of all A and B
    iteration durations (end − start). Measured iterations only (warm-ups dropped, as for the CI
    the pairs feed). Pairs are found once (rate > 0) and thresholded for every m at once.
    """
    rates = np.asarray(m, dtype=np.float64)
    if rates.ndim != 1 or rates.size == 0 or np.any((rates < 0) | (rates >= 1)):
        raise ValueError("m must be a non-empty 1-D array of minimum overlap rates in [0, 1)")
    if set(group.method.tolist()) != {"aduet"}:
        raise ValueError("overlap statistics describe the async duet: pass the rows of one benchmark's aduet method")
    measured = group.measured()
    ap = aduet_pairs(measured, 0.0)
    total = float((measured.end_ns - measured.start_ns).sum())
    above = ap.pairs.overlap_rate[None, :] > rates[:, None]  # m × pairs
    overlap = np.asarray(ap.pairs.overlap_ns, dtype=np.float64)
    rel = 2.0 * (above * overlap[None, :]).sum(axis=1) / total
    share_a = np.array([np.unique(ap.pairs.a_index[row]).size for row in above]) / max(ap.a_count, 1)
    share_b = np.array([np.unique(ap.pairs.b_index[row]).size for row in above]) / max(ap.b_count, 1)
    return OverlapStatistics(
        benchmark=str(group.benchmark[0]), m=rates, relative_overlap_time=rel, pairs=above.sum(axis=1),
        paired_share_a=share_a, paired_share_b=share_b,
    )


# -- CI width reduction ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class WidthReduction:
    """Relative CI width per benchmark and method, and the reduction sequential → duet/aduet."""

    benchmarks: tuple[str, ...]
    sequential: np.ndarray
    duet: np.ndarray
    aduet: np.ndarray

    def reduction(self, method: str) -> np.ndarray:
        """width(sequential) / width(method) per benchmark: > 1 means the duet's CI is narrower."""
        if method not in PAIRED_METHODS:
            raise ValueError(f"method must be duet or aduet, got {method!r}")
        return self.sequential / (self.duet if method == "duet" else self.aduet)

    def geomean_reduction(self, method: str) -> float:
        """Geometric mean of `reduction` over the benchmarks that have both: Bulej et al. 2020 Table 1."""
        v = self.reduction(method)
        v = v[np.isfinite(v) & (v > 0)]
        return float(np.exp(np.log(v).mean())) if v.size else math.nan


def ci_width_reduction(results: Iterable[Any]) -> WidthReduction:
    """Per benchmark, relative CI width sequential → duet/aduet — Bulej et al. 2020 Table 1.

    `results`: one `AnalysisRow` (see `_judged`) per benchmark and method (one
    estimator); a missing method is nan.
    """
    widths: dict[str, dict[str, float]] = {}
    for r in _judged(results):
        widths.setdefault(r.benchmark, {})[r.method] = r.relative_ci_width
    names = tuple(widths)

    def column(method: str) -> np.ndarray:
        return np.array([widths[b].get(method, math.nan) for b in names], dtype=np.float64)

    return WidthReduction(benchmarks=names, sequential=column("sequential"), duet=column("duet"), aduet=column("aduet"))


# -- grouping ---------------------------------------------------------------------------------------------
def _codes(column: np.ndarray) -> tuple[list[object], np.ndarray]:
    """Distinct values in first-seen order and each row's code; a dict pass is ~5× faster than
    np.unique on a million Python strings."""
    seen: dict[object, int] = {}
    codes = np.fromiter((seen.setdefault(v, len(seen)) for v in column.tolist()), np.int64, column.size)
    return list(seen), codes


def split_groups(table: IterationTable) -> list[tuple[str, str, IterationTable]]:
    """What `IterationTable.groups()` yields (same order), with one sort instead of a scan of the
    whole table per benchmark and method (4 s → 0.2 s on a million rows)."""
    benches, bench = _codes(table.benchmark)
    method = np.select([table.method == m for m in METHODS], list(range(len(METHODS))), len(METHODS))
    key = bench * (len(METHODS) + 1) + method
    order = np.argsort(key, kind="stable")
    sorted_table = table.where(order)
    cuts = np.flatnonzero(np.diff(key[order])) + 1
    out: list[tuple[str, str, IterationTable]] = []
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, order.size], strict=True):
        if lo == hi:
            continue
        k = int(key[order[lo]])
        mi = k % (len(METHODS) + 1)
        if mi == len(METHODS):
            continue  # a method none of the studies knows
        out.append((str(benches[k // (len(METHODS) + 1)]), METHODS[mi], sorted_table.where(np.arange(lo, hi))))
    return out


# -- everything at once ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CampaignStudies:
    comparisons: tuple[AnalysisRow, ...]
    width_reduction: WidthReduction
    runtime: RuntimeSaving
    overlaps: tuple[OverlapStatistics, ...]
    shuffles: tuple[ShuffleResult, ...]
    shuffle_ratio: dict[str, float]
    false_positives: dict[str, FalsePositiveRate] | None  # A/A campaigns only
    slowdowns: tuple[SlowdownResult, ...]
    slowdown_curves: dict[str, SlowdownCurve]
    #: (benchmark, method, why) of the groups the studies had to leave out, e.g. an async duet
    #: whose pairs all came from one run
    skipped: tuple[tuple[str, str, str], ...] = ()


def run_studies(
    table: IterationTable,
    *,
    aa: bool = True,
    estimator: str = "run-means",
    confidence_level: float = 0.99,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    n_shuffles: int = 20,
    slowdowns: Sequence[float] | np.ndarray = DEFAULT_SLOWDOWNS,
    min_overlap_rate: float = 0.4,
    seed: int = 0,
) -> CampaignStudies:
    """Every study on one campaign. With `aa` (the campaign compared A with itself) also the A/A
    false-positive rates and the minimal detectable slowdowns, which only mean something on A/A data.
    Loops over benchmark × method; everything inside is vectorized."""
    ss = np.random.SeedSequence(seed)
    comparisons: list[AnalysisRow] = []
    overlaps: list[OverlapStatistics] = []
    shuffles: list[ShuffleResult] = []
    slows: list[SlowdownResult] = []
    skipped: list[tuple[str, str, str]] = []
    for bench, method, group in split_groups(table):
        rng = np.random.default_rng(ss.spawn(1)[0])
        # One group that cannot be analysed (too few runs with pairs) must not cost the others their
        # studies: it is left out of every study, and said so.
        try:
            comparison = analyze_group(group, method, AnalysisOptions(
                estimator=estimator, confidence_level=confidence_level, n_resamples=n_resamples, seed=rng,
                min_overlap_rate=min_overlap_rate))
            shuffle = (shuffle_analysis(group, method, n_shuffles=n_shuffles, confidence_level=confidence_level,
                                        n_resamples=n_resamples, random_state=rng, min_overlap_rate=min_overlap_rate)
                       if method in PAIRED_METHODS else None)
            slow = (minimal_detectable_slowdown(group, method, slowdowns, estimator=estimator, alpha=alpha,
                                                confidence_level=confidence_level, n_resamples=n_resamples,
                                                random_state=rng, min_overlap_rate=min_overlap_rate)
                    if aa else None)
        except ValueError as exc:
            skipped.append((bench, method, str(exc)))
            continue
        comparisons.append(comparison)
        if shuffle is not None:
            shuffles.append(shuffle)
        if method == "aduet":
            overlaps.append(overlap_statistics(group))
        if slow is not None:
            slows.append(slow)
    if not np.any((table.start_ns != NO_TIME) & (table.end_ns != NO_TIME)):
        skipped.append(("every benchmark", "runtime saving",
                        "no iteration has start and end timestamps (imported data, or a harness without a hook), "
                        "so the machine time of a run is unknown"))
    return CampaignStudies(
        comparisons=tuple(comparisons),
        width_reduction=ci_width_reduction(comparisons),
        runtime=runtime_saving(table),
        overlaps=tuple(overlaps),
        shuffles=tuple(shuffles),
        shuffle_ratio=shuffle_summary(shuffles),
        false_positives=aa_false_positive_rate(comparisons, alpha=alpha) if aa else None,
        slowdowns=tuple(slows),
        slowdown_curves=slowdown_curves(slows),
        skipped=tuple(skipped),
    )


__all__ = [
    "CampaignStudies", "FalsePositiveRate", "OverlapStatistics", "RuntimeSaving", "WidthReduction",
    "aa_false_positive_rate", "ci_width_reduction", "minimal_detectable_slowdown", "overlap_statistics",
    "run_studies", "runtime_saving", "shuffle_analysis", "slowdown_curves",
]
