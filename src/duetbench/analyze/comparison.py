"""Compare A and B measured by one method, on arrays: the statistics under every estimator (`analyze.api`
is the way in from invocations and iteration tables)."""
from __future__ import annotations

import msgspec
import numpy as np
from numpy.typing import ArrayLike

from duetbench.model.method import METHODS, Method

from ._inputs import RandomState, RunsLike, as_runs, as_sample, check_confidence_level, check_random_state
from .interval import PRIOR_PRECISION, confidence_sequence, yuen
from .overlap import OverlapPairs, aduet_ratio_ci, overlap_pairs, overlap_pairs_by_run
from .ratio import (
    DifferenceResult,
    IntervalKind,
    RatioResult,
    check_interval,
    duet_ratio_ci,
    exp_interval,
    paired_log_ratios,
    robust_pair_filter,
    sequential_cis,
)
from .summary import Summary, coefficient_of_variation, describe, relative_ci_width, unsummarized
from .tests import mann_whitney_u
from .verdicts import verdict

#: Below this many bootstrap units a percentile interval is noticeably too narrow.
FEW_UNITS = 10
#: The robust filter's default cap (10%) removes nothing below this many pairs.
ROBUST_MIN_PAIRS = 10

_A = "A (baseline)"
_B = "B (candidate)"


class ComparisonResult(msgspec.Struct, frozen=True):
    """Everything the report shows about one A/B comparison."""

    method: str  # "duet" | "aduet" | "sequential"
    metric: str  # "wall" | "cpu" | ...
    runs: int  # pairs (duet/aduet) or min(n_a, n_b) (sequential) that entered the CI
    ratio: RatioResult
    verdict: str
    u_test_p: float
    relative_ci_width: float
    a: Summary
    b: Summary
    difference: DifferenceResult | None  # sequential only
    outliers_removed: int
    ratio_cv: float | None  # CV of the per-pair ratios that entered the CI (duet/aduet)
    notes: tuple[str, ...]


def robust_notes(robust: bool, n_pairs: int, removed: int, symmetric_trim: bool = False) -> list[str]:
    """What the robust pair filter did, in words; `symmetric_trim`: the estimate is Yuen's, which trims as
    many pairs from the other end too (interval.yuen)."""
    if not robust:
        return []
    if n_pairs < ROBUST_MIN_PAIRS:
        return [f"robust pair filter inactive: it needs at least {ROBUST_MIN_PAIRS} pairs, got {n_pairs}"]
    if removed:
        return [
            f"robust pair filter removed {removed} of {n_pairs} pairs whose B/A ratio lay far from the median "
            "(one-sided interference)" + (", and the estimate trims as many from the other end (Yuen's trimmed "
                                          "mean is symmetric)" if symmetric_trim else "")
            + "; the U test and the A/B summaries still include them"
        ]
    return []


def _filtered_runs(a: np.ndarray, lengths: np.ndarray, keep: np.ndarray) -> list[np.ndarray]:
    bounds = np.cumsum(lengths)[:-1]
    return [x[k] for x, k in zip(np.split(a, bounds), np.split(keep, bounds), strict=True) if k.any()]


def _anytime_sequential(a: RunsLike, b: RunsLike, cl: float) -> tuple[RatioResult, DifferenceResult | None]:
    units = anytime_units("sequential", a, b)
    return exp_interval(confidence_sequence(units, cl, PRIOR_PRECISION), cl, int(units.size), "anytime"), None


def _duet(
    a: RunsLike, b: RunsLike, robust: bool, cl: float, n_resamples: int, random_state: RandomState,
    interval: str,
) -> tuple[RatioResult, int, int, float, list[str]]:
    ra, rb, log_ratio = paired_log_ratios(a, b, names=(_A, _B))
    n_pairs = log_ratio.size
    keep = robust_pair_filter(log_ratio) if robust else np.ones(n_pairs, dtype=np.bool_)
    removed = int(n_pairs - keep.sum())
    a_in: RunsLike
    b_in: RunsLike
    ratio_cv = coefficient_of_variation(np.exp(log_ratio[keep]))
    notes = robust_notes(robust, n_pairs, removed, symmetric_trim=ra.flat and interval == "t")
    if ra.flat and interval == "t":
        # Yuen's interval: the symmetrically trimmed mean, with the spread of all pairs (the trimmed ones
        # winsorized), so setting outliers aside does not make the interval claim too much.
        ratio = exp_interval(yuen(log_ratio, keep, cl), cl, int(keep.sum()))
        return ratio, int(keep.sum()), removed, ratio_cv, notes
    if ra.flat:
        a_in, b_in = ra.values[keep], rb.values[keep]
    else:
        # A run whose every pair was dropped leaves the bootstrap rather than becoming empty.
        a_in = _filtered_runs(ra.values, ra.lengths, keep)
        b_in = _filtered_runs(rb.values, rb.lengths, keep)
    ratio = duet_ratio_ci(a_in, b_in, confidence_level=cl, n_resamples=n_resamples, random_state=random_state,
                          interval="t" if interval == "t" else "bootstrap")
    return ratio, int(keep.sum()), removed, ratio_cv, notes


def _aduet(
    a: ArrayLike,
    b: ArrayLike,
    stamps: tuple[ArrayLike | None, ...],
    run_ids: tuple[ArrayLike | None, ArrayLike | None],
    min_overlap_rate: float,
    robust: bool,
    cl: float,
    n_resamples: int,
    random_state: RandomState,
    interval: str,
) -> tuple[RatioResult, int, int, float, list[str]]:
    given = [s for s in stamps if s is not None]
    if len(given) != 4:
        raise ValueError("the aduet method pairs iterations by time: "
                         "a_start, a_end, b_start and b_end are all required")
    a_start, a_end, b_start, b_end = given
    x = as_sample(a, _A, min_size=2, positive=True)
    y = as_sample(b, _B, min_size=2, positive=True)
    for name, n, s in (("a_start", x.size, a_start), ("b_start", y.size, b_start)):
        if np.shape(s) != (n,):
            raise ValueError(f"{name} must hold one timestamp per iteration: expected {n}, got shape {np.shape(s)}")
    pair_runs: np.ndarray | None
    if run_ids[0] is None and run_ids[1] is None:
        pairs: OverlapPairs = overlap_pairs(a_start, a_end, b_start, b_end, min_overlap_rate=min_overlap_rate)
        pair_runs = None
    elif run_ids[0] is None or run_ids[1] is None:
        raise ValueError("give run ids for both sides (a_run_ids and b_run_ids) or for neither")
    else:
        pairs, pair_runs = overlap_pairs_by_run(
            a_start, a_end, b_start, b_end, run_ids[0], run_ids[1], min_overlap_rate=min_overlap_rate
        )
    if len(pairs) == 0:
        raise ValueError(
            f"no A and B iterations overlap by more than {min_overlap_rate:.0%} of their length, so the async duet "
            "has nothing to pair; were A and B really running at the same time (check the timestamps' clock and unit)?"
        )
    notes = [
        f"{len(pairs)} overlap pairs (overlap rate > {min_overlap_rate:g}); "
        f"{x.size - np.unique(pairs.a_index).size} of {x.size} A and "
        f"{y.size - np.unique(pairs.b_index).size} of {y.size} B iterations unpaired"
    ]
    log_ratio = np.log(y[pairs.b_index]) - np.log(x[pairs.a_index])
    keep = robust_pair_filter(log_ratio) if robust else np.ones(len(pairs), dtype=np.bool_)
    removed = int(len(pairs) - keep.sum())
    notes += robust_notes(robust, len(pairs), removed)
    kept = pairs.subset(keep)
    if interval == "t" and pair_runs is None and removed:
        # Over pairs, the t interval accounts for the pairs the filter set aside (as Yuen's does for the
        # sync duet): all pairs go in, with the mask. Simulated: 1.7-2.0 % A/A misses at a nominal 1 %
        # when the kept pairs were treated as all there was.
        ratio = aduet_ratio_ci(x, y, pairs, keep=keep, confidence_level=cl, interval="t")
    else:
        ratio = aduet_ratio_ci(
            x,
            y,
            kept,
            run_ids=None if pair_runs is None else pair_runs[keep],
            confidence_level=cl,
            n_resamples=n_resamples,
            random_state=random_state,
            interval="t" if interval == "t" else "bootstrap",
        )
    ratio_cv = coefficient_of_variation(np.exp(log_ratio[keep]))
    return ratio, len(kept), removed, ratio_cv, notes


def anytime_units(method: str, a: RunsLike, b: RunsLike) -> np.ndarray:
    """The units the confidence sequence of a comparison is over, as log ratios B/A: a duet's pairs
    (or runs), the sequential method's rounds (A's and B's k-th runs, measured next to each other in
    random order, RMIT). All of them: the robust filter's choices change with n, which a sequence
    cannot follow, and outliers only widen it. The async duet has none: its overlap pairs share
    iterations, and a confidence sequence needs independent units."""
    if method == "aduet":
        raise ValueError("the async duet has no independent units for an anytime-valid interval")
    ra, rb = as_runs(a, _A), as_runs(b, _B)
    if method == "duet":
        _, _, log_ratio = paired_log_ratios(a, b, names=(_A, _B))
        return log_ratio if ra.flat else ra.run_means(log_ratio)
    k = min(ra.count, rb.count)
    return np.log(rb.run_means()[:k]) - np.log(ra.run_means()[:k])


def compare(
    method: Method | str,
    a: RunsLike,
    b: RunsLike,
    *,
    metric: str = "wall",
    a_start: ArrayLike | None = None,
    a_end: ArrayLike | None = None,
    b_start: ArrayLike | None = None,
    b_end: ArrayLike | None = None,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    min_overlap_rate: float = 0.4,
    robust: bool = True,
    a_run_ids: ArrayLike | None = None,
    b_run_ids: ArrayLike | None = None,
    u_test: bool = True,
    interval: IntervalKind | str = "t",
    summaries: bool = True,
) -> ComparisonResult:
    """Compare B against A measured with `method`; the analysis behind `duet compare`.

    - "duet" (Bulej et al. 2020 §3): a[i], b[i] paired (1-D, or per-run arrays paired
      iteration by iteration); with `robust` our `robust_pair_filter` first drops isolated pair
      outliers (notes say how many); then `duet_ratio_ci`.
    - "aduet" (Drozdík 2023 §3.3.2, §4.3.2): a, b are per-iteration metric values,
      paired by overlap of [a_start, a_end] and [b_start, b_end] (ns); with `a_run_ids` and
      `b_run_ids` (our addition) pairing happens within runs and the bootstrap goes over runs,
      else over pairs. `robust` applies the same pair filter (our extension: the asymmetric
      noise it targets hits the async duet as much as the sync one). Then `aduet_ratio_ci`.
    - "sequential" (Bulej et al. 2020 §4.1 standard method, docs/methods.md): `ratio_of_means_ci` and
      `difference_of_means_ci`, sharing their replicates where both resample run means
      (`sequential_cis`); a and b are independent (1-D: one value per run; or per-run arrays).
    The Mann–Whitney U test (Drozdík 2023 §4.3.3) runs on all raw A vs B values; `u_test=False` skips it
    (u_test_p is then nan), for live estimates that only steer stopping; so does `summaries=False` for the
    A and B summaries (`a` and `b` then hold their sizes only, every statistic nan): describing both sides
    was ~40 % of a live look (`monitor.watch`), which runs between two pairs.

    `interval`: "t" (default) the Student-t family of `analyze.interval` — Yuen's interval over a
    duet's pairs (it accounts for the robust filter), t over runs, Newey–West t over an async duet's
    overlap pairs, Fieller's ratio and Welch's difference for the sequential method; they keep their
    level from 5 units on (tests/analyze/test_interval_simulation.py). "bootstrap": the papers'
    percentile bootstrap, too narrow below ~30 units.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    if not isinstance(metric, str) or not metric:
        raise ValueError(f"metric must be a non-empty name such as 'wall' or 'cpu', got {metric!r}")
    cl = check_confidence_level(confidence_level)
    check_interval(interval)
    if interval == "anytime" and method == "aduet":
        raise ValueError("interval='anytime' needs independent units; the async duet's overlap pairs are not")
    # Checked here, made into a Generator only by an interval that draws (a bootstrap): the t interval
    # of a duet's report then never imports numpy.random.
    random_state = check_random_state(random_state)
    stated_cl = cl
    if interval == "t-stopped":
        # The comparison stopped once this interval was narrow enough, and such a stop favours samples
        # whose spread happened to be small; the interval is made at level 1 − α/2 to pay for it
        # (analyze/monitor.py: 1.0–1.75 % A/A false alarms at a nominal 1 % without, ≤ 0.8 % with).
        interval, cl = "t", 1.0 - (1.0 - cl) / 2.0

    if method == "aduet":
        raw_a = as_sample(a, _A, min_size=2, positive=True)
        raw_b = as_sample(b, _B, min_size=2, positive=True)
    else:
        raw_a = as_runs(a, _A).values
        raw_b = as_runs(b, _B).values

    difference: DifferenceResult | None = None
    ratio_cv: float | None = None
    removed = 0
    notes: list[str] = []
    if method == "duet":
        ratio, used, removed, ratio_cv, notes = _duet(a, b, robust, cl, n_resamples, random_state,
                                                      "t" if interval == "anytime" else interval)
        unit = "runs" if ratio.n != used else "pairs"
    elif method == "aduet":
        ratio, used, removed, ratio_cv, notes = _aduet(
            raw_a, raw_b, (a_start, a_end, b_start, b_end), (a_run_ids, b_run_ids),
            min_overlap_rate, robust, cl, n_resamples, random_state, interval,
        )
        unit = "pairs" if a_run_ids is None else "runs"
    elif interval == "anytime":
        ratio, difference = _anytime_sequential(a, b, cl)
        used = ratio.n
        unit = "rounds"
    else:
        ratio, difference = sequential_cis(a, b, confidence_level=cl, n_resamples=n_resamples,
                                           random_state=random_state, interval=interval)
        used = ratio.n
        unit = "runs per side"
    if interval == "anytime" and method == "duet":
        units = anytime_units(method, a, b)
        ratio = exp_interval(confidence_sequence(units, cl, PRIOR_PRECISION), cl, int(units.size), "anytime")
        used, removed = int(units.size), 0
        notes = [n for n in notes if not n.startswith("robust pair filter")]
    if interval == "anytime":
        notes.append(f"stopped once a difference was evident: the interval is the anytime-valid {cl:.0%} "
                     f"confidence sequence over all {ratio.n} {unit} (valid at a stop chosen by looking at the data; "
                     "wider than a fixed-n interval)")
    if cl != stated_cl:
        ratio = msgspec.structs.replace(ratio, confidence_level=stated_cl, interval="t-stopped")
        if difference is not None:
            difference = msgspec.structs.replace(difference, confidence_level=stated_cl)
        notes.append(f"stopped once the CI was narrow enough: the {stated_cl:.0%} CI is made at {cl:.1%} "
                     "to stay true despite stopping when the spread looked small")
    if interval == "bootstrap" and ratio.n < FEW_UNITS:
        notes.append(
            f"only {ratio.n} {unit} to resample: percentile bootstrap intervals come out too narrow "
            f"with fewer than {FEW_UNITS}; measure more for a trustworthy CI"
        )

    return ComparisonResult(
        method=method,
        metric=metric,
        runs=used,
        ratio=ratio,
        verdict=verdict(ratio.low, ratio.high),
        u_test_p=mann_whitney_u(raw_a, raw_b).pvalue if u_test else float("nan"),
        relative_ci_width=relative_ci_width(ratio.low, ratio.high, ratio.estimate),
        a=describe(raw_a) if summaries else unsummarized(int(raw_a.size)),
        b=describe(raw_b) if summaries else unsummarized(int(raw_b.size)),
        difference=difference,
        outliers_removed=removed,
        ratio_cv=ratio_cv,
        notes=tuple(notes),
    )
