"""Asynchronous duet: pairing iterations by time overlap, and the ratio CI over those pairs."""
from __future__ import annotations

from typing import Literal

import msgspec
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._inputs import (
    FloatArray,
    IntArray,
    RandomState,
    as_generator,
    as_sample,
    check_confidence_level,
    check_n_resamples,
)
from .interval import hac_t, student_t
from .ratio import IntervalKind, RatioResult, check_interval, exp_bound, exp_interval


class OverlapPairs(msgspec.Struct, frozen=True, eq=False):
    """Pairs of overlapping iterations, indices into the caller's A and B arrays, sorted by
    (a_index, b_index). `overlap_ns` has the dtype of the timestamps (int64 for ns)."""

    a_index: IntArray
    b_index: IntArray
    overlap_ns: NDArray[np.int64] | FloatArray
    overlap_rate: FloatArray

    def __len__(self) -> int:
        return int(self.a_index.size)

    def subset(self, keep: ArrayLike) -> OverlapPairs:
        """The pairs selected by a boolean mask or index array."""
        k = np.asarray(keep)
        return OverlapPairs(self.a_index[k], self.b_index[k], self.overlap_ns[k], self.overlap_rate[k])


def _timeline(start: ArrayLike, end: ArrayLike, side: str) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(start)
    e = np.asarray(end)
    if s.ndim != 1 or e.ndim != 1 or s.shape != e.shape:
        raise ValueError(f"{side}_start and {side}_end must be 1-D arrays of equal length, "
                         f"got shapes {s.shape} and {e.shape}")
    integer = s.dtype.kind in "iu" and e.dtype.kind in "iu"
    # Integer nanoseconds stay exact in int64; float timestamps (e.g. seconds) are accepted too.
    dtype = np.int64 if integer else np.float64
    try:
        s = s.astype(dtype)
        e = e.astype(dtype)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{side} timestamps must be numbers ({exc})") from None
    if not integer:
        bad = ~(np.isfinite(s) & np.isfinite(e))
        if bad.any():
            raise ValueError(f"{side} iteration {int(np.flatnonzero(bad)[0])} has a non-finite timestamp")
    short = e <= s
    if short.any():
        i = int(np.flatnonzero(short)[0])
        raise ValueError(f"{side} iteration {i} ends ({e[i]}) no later than it starts ({s[i]}); "
                         "iterations need end > start")
    return s, e


def overlap_pairs(
    a_start: ArrayLike,
    a_end: ArrayLike,
    b_start: ArrayLike,
    b_end: ArrayLike,
    *,
    min_overlap_rate: float = 0.4,
) -> OverlapPairs:
    """Pair A and B iterations of one asynchronous duet run by overlap — Drozdík 2023
    §3.3.2 and eq. 4.1.

    overlap = min(end) − max(start), kept when > 0; overlap_rate = min(overlap/len_A,
    overlap/len_B); pairs with rate > `min_overlap_rate` (the thesis's m = 0.4) are returned.
    Iterations of one side must not overlap each other (one process runs them in turn; pass
    one run at a time), but the sides may hold different numbers of iterations and need not be
    sorted. Vectorized: for each A iteration the B iterations that intersect it form a
    contiguous block of B sorted by start, found with two binary searches.
    """
    m = float(min_overlap_rate)
    if not 0.0 <= m < 1.0:
        raise ValueError(f"min_overlap_rate must lie in [0, 1), got {min_overlap_rate}")
    a_s, a_e = _timeline(a_start, a_end, "a")
    b_s, b_e = _timeline(b_start, b_end, "b")
    if (a_s.dtype == np.int64) != (b_s.dtype == np.int64):
        a_s, a_e, b_s, b_e = (v.astype(np.float64) for v in (a_s, a_e, b_s, b_e))

    a_order = np.argsort(a_s, kind="stable")
    b_order = np.argsort(b_s, kind="stable")
    a_s, a_e = a_s[a_order], a_e[a_order]
    b_s, b_e = b_s[b_order], b_e[b_order]
    for side, s, e, order in (("a", a_s, a_e, a_order), ("b", b_s, b_e, b_order)):
        clash = s[1:] < e[:-1]
        if clash.any():
            k = int(np.flatnonzero(clash)[0])
            raise ValueError(
                f"{side} iterations {int(order[k])} and {int(order[k + 1])} overlap each other; "
                "iterations of one side must be disjoint in time (pair one run at a time)"
            )

    # Disjoint and sorted by start means sorted by end too, so both searches are valid.
    first = np.searchsorted(b_e, a_s, side="right")  # first B ending after A starts
    stop = np.searchsorted(b_s, a_e, side="left")  # B starting before A ends lie below this
    counts = np.maximum(stop - first, 0)
    total = int(counts.sum())
    ai = np.repeat(np.arange(a_s.size), counts)
    block_start = np.repeat(np.cumsum(counts) - counts, counts)
    bj = np.repeat(first, counts) + (np.arange(total) - block_start)

    overlap = np.minimum(a_e[ai], b_e[bj]) - np.maximum(a_s[ai], b_s[bj])
    rate = np.minimum(overlap / (a_e[ai] - a_s[ai]), overlap / (b_e[bj] - b_s[bj]))
    keep = (overlap > 0) & (rate > m)
    a_index = a_order[ai[keep]].astype(np.intp)
    b_index = b_order[bj[keep]].astype(np.intp)
    sort = np.lexsort((b_index, a_index))
    return OverlapPairs(
        a_index=a_index[sort],
        b_index=b_index[sort],
        overlap_ns=overlap[keep][sort],
        overlap_rate=rate[keep][sort].astype(np.float64),
    )


def overlap_pairs_by_run(
    a_start: ArrayLike,
    a_end: ArrayLike,
    b_start: ArrayLike,
    b_end: ArrayLike,
    a_run_ids: ArrayLike,
    b_run_ids: ArrayLike,
    *,
    min_overlap_rate: float = 0.4,
) -> tuple[OverlapPairs, np.ndarray]:
    """`overlap_pairs` applied within each run; returns the pairs (indices into the full
    arrays) and the run id of each pair, ready for `aduet_ratio_ci(run_ids=...)`.

    Drozdík 2023 §3.3.2 pairs iterations of the A and B runs of one duet run; this
    helper only does the bookkeeping for many runs at once. Runs present on one side only
    contribute no pairs.
    """
    ids_a = np.asarray(a_run_ids)
    ids_b = np.asarray(b_run_ids)
    if ids_a.shape != np.shape(a_start) or ids_b.shape != np.shape(b_start):
        raise ValueError("a_run_ids and b_run_ids must give the run of every A and B iteration")
    a_s, a_e, b_s, b_e = (np.asarray(v) for v in (a_start, a_end, b_start, b_end))
    parts: list[OverlapPairs] = []
    part_ids: list[np.ndarray] = []
    for run in np.intersect1d(ids_a, ids_b):
        ia = np.flatnonzero(ids_a == run)
        ib = np.flatnonzero(ids_b == run)
        try:
            p = overlap_pairs(a_s[ia], a_e[ia], b_s[ib], b_e[ib], min_overlap_rate=min_overlap_rate)
        except ValueError as exc:
            raise ValueError(f"run {run!r}: {exc} (iteration numbers count within the run)") from None
        parts.append(OverlapPairs(ia[p.a_index], ib[p.b_index], p.overlap_ns, p.overlap_rate))
        part_ids.append(np.full(len(p), run, dtype=ids_a.dtype))
    if not parts:
        empty = overlap_pairs([], [], [], [], min_overlap_rate=min_overlap_rate)
        return empty, ids_a[:0]
    pairs = OverlapPairs(
        a_index=np.concatenate([p.a_index for p in parts]),
        b_index=np.concatenate([p.b_index for p in parts]),
        overlap_ns=np.concatenate([p.overlap_ns for p in parts]),
        overlap_rate=np.concatenate([p.overlap_rate for p in parts]),
    )
    return pairs, np.concatenate(part_ids)


def aduet_ratio_ci(
    a_times: ArrayLike,
    b_times: ArrayLike,
    pairs: OverlapPairs,
    *,
    run_ids: ArrayLike | None = None,
    estimator: Literal["paired", "weighted"] = "paired",
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    interval: IntervalKind = "t",
    keep: ArrayLike | None = None,
) -> RatioResult:
    """CI of the B/A ratio of an asynchronous duet — Drozdík 2023 §4.3.2, on the
    ratio scale of Bulej et al. 2020 §3.

    `a_times[i]`, `b_times[j]`: the metric of each iteration (wall or CPU time); `pairs` from
    `overlap_pairs`. Per pair v = log(b/a).
    - "paired": with `run_ids` (run of each pair) the per-run mean of v (log of the per-run
      geometric mean ratio), percentile bootstrap over runs ("run means" sampling, §4.3.2);
      without, bootstrap over pairs. The thesis used differences in ns; ratios are scale-free
      (docs/notes/seed_tools.md §1.11 item 11).
    - "weighted": D3S's overlap-weighted log ratio (docs/methods.md): estimate exp(Σ w·v / Σ w) with
      w = overlap time; bootstrap over runs (sums kept per run) or over pairs. Our design notes wrote
      log(iA/iB); we use log(b/a) so that the ratio reads B/A like every other method.
    interval="t" (default): a Student-t interval over runs, or over pairs in time order with a
    variance that counts the covariance of pairs up to 2 apart (`interval.hac_t`), because
    neighbouring overlap pairs share an iteration and are not independent; the weighted estimator's
    through its linearization
    (Σ w (v − estimate) / mean w per unit). interval="bootstrap": the thesis's percentile bootstrap.
    `keep` (interval="t" over pairs only): which of `pairs` the robust filter kept; the estimate is the
    kept pairs' mean and the variance that of all pairs with the removed ones winsorized to the kept
    range (`interval.hac_t(..., keep=)`, Yuen's idea on a dependent series).
    `n` of the result is the number of units (runs or pairs).
    """
    cl = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    if estimator not in ("paired", "weighted"):
        raise ValueError(f'estimator must be "paired" or "weighted", got {estimator!r}')
    a = as_sample(a_times, "a_times", positive=True)
    b = as_sample(b_times, "b_times", positive=True)
    n_pairs = len(pairs)
    if n_pairs < 2:
        raise ValueError(f"the async duet needs at least 2 overlap pairs, got {n_pairs}")
    if (pairs.a_index.max() >= a.size or pairs.b_index.max() >= b.size
            or min(pairs.a_index.min(), pairs.b_index.min()) < 0):
        raise ValueError("pairs refer to iterations outside a_times/b_times; pair the same arrays you pass here")
    v = np.log(b[pairs.b_index]) - np.log(a[pairs.a_index])
    w = np.asarray(pairs.overlap_ns, dtype=np.float64)

    if run_ids is None:
        unit_w, unit_wv, unit_v = w, w * v, v
    else:
        ids = np.asarray(run_ids)
        if ids.shape != (n_pairs,):
            raise ValueError(f"run_ids must give the run of each pair: expected {n_pairs} values, "
                             f"got shape {ids.shape}")
        _, unit = np.unique(ids, return_inverse=True)
        n_units = int(unit.max()) + 1
        if n_units < 2:
            raise ValueError("the async duet CI over runs needs pairs from at least 2 runs; "
                             "omit run_ids to bootstrap over pairs")
        count = np.bincount(unit, minlength=n_units)
        unit_v = np.bincount(unit, weights=v, minlength=n_units) / count
        unit_w = np.bincount(unit, weights=w, minlength=n_units).astype(np.float64)
        unit_wv = np.bincount(unit, weights=w * v, minlength=n_units).astype(np.float64)

    if keep is not None:
        if interval != "t" or run_ids is not None or estimator != "paired":
            raise ValueError("keep= is for the paired t interval over pairs only")
        mask = np.asarray(keep, dtype=bool)
        kept_pairs = pairs.subset(mask)
        distinct = min(np.unique(kept_pairs.a_index).size, np.unique(kept_pairs.b_index).size)
        iv = hac_t(v, cl, keep=mask, df=min(distinct - 1, int(mask.sum()) - 1))
        return exp_interval(iv, cl, int(mask.sum()))
    if check_interval(interval) == "t":
        # Pairs share iterations: they carry about as many degrees of freedom as the side with fewer
        # distinct iterations among them, not one per pair.
        distinct = min(np.unique(pairs.a_index).size, np.unique(pairs.b_index).size)
        return _aduet_t(unit_v, unit_w, unit_wv, estimator, over_runs=run_ids is not None, cl=cl,
                        df=distinct - 1)
    from .bootstrap import bootstrap_distribution, percentile_interval  # not needed by the t interval: ratio.py

    rng = as_generator(random_state)
    if estimator == "paired":
        estimate = float(unit_v.mean())
        dist = bootstrap_distribution((unit_v,), np.mean, n_resamples=n_resamples, rng=rng)
        n_units = unit_v.size
    else:
        estimate = float(unit_wv.sum() / unit_w.sum())
        dist = bootstrap_distribution((unit_w, unit_wv), _weighted_mean, n_resamples=n_resamples, rng=rng)
        n_units = unit_w.size
    low, high = percentile_interval(dist, cl)
    return RatioResult(
        estimate=exp_bound(estimate), low=exp_bound(low), high=exp_bound(high), confidence_level=cl, n=int(n_units)
    )


def _aduet_t(unit_v: FloatArray, unit_w: FloatArray, unit_wv: FloatArray, estimator: str, *, over_runs: bool,
             cl: float, df: int) -> RatioResult:
    if estimator == "paired":
        values = unit_v
    else:
        ratio = float(unit_wv.sum() / unit_w.sum())
        values = ratio + (unit_wv - ratio * unit_w) / unit_w.mean()
    iv = student_t(values, cl) if over_runs else hac_t(values, cl, df=min(df, values.size - 1))
    return exp_interval(iv, cl, int(values.size))


def _weighted_mean(weights: FloatArray, weighted_values: FloatArray, *, axis: int) -> FloatArray:
    total: FloatArray = weighted_values.sum(axis=axis) / weights.sum(axis=axis)
    return total
