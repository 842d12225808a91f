"""Exact tail quantiles of many bootstrap distributions at once, without sorting them.

A percentile bootstrap CI needs two order statistics near each end of 10 000 replicates. Selecting
them with `np.partition` costs ~10 ns per replicate and dominated our batched CIs; here each row is
first cut down to the few hundred replicates beyond a cheap normal-theory threshold (one compare pass,
<1 ns per replicate), and only those are sorted. The result is exactly `np.quantile(..., axis=-1)`
with linear interpolation (the percentile interval of Bulej et al. 2020, Bulej et al. 2020 §3 step 5, and of
`scipy.stats.bootstrap(method="percentile")`): a row whose cut keeps too few replicates to contain
the wanted order statistics — a skewed or lumpy distribution — falls back to `np.quantile`.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np
from numpy.typing import ArrayLike

from ._inputs import FloatArray

#: Rows shorter than this are cheap enough for np.quantile.
_SMALL = 512


def _positions(n: int, q: float) -> tuple[int, float]:
    pos = q * (n - 1)
    k = int(np.floor(pos))
    return k, pos - k


def _lerp(a: FloatArray, b: FloatArray, t: float) -> FloatArray:
    # numpy's own interpolation formula (numpy/lib/_function_base_impl.py `_lerp`), so that results
    # agree with np.quantile to the last bit whenever the same order statistics are selected.
    diff = b - a
    out = a + diff * t
    if t >= 0.5:
        out = b - diff * (1.0 - t)
    return out


def _tail_order_stats(rows: FloatArray, j: int, threshold: FloatArray, top: bool
                      ) -> tuple[FloatArray, FloatArray, np.ndarray]:
    """Order statistics j and j+1 of every row counted from the bottom (or, with `top`, from the
    top), found among the values beyond `threshold` only; `ok` marks rows where at least j+2 values
    lie beyond it, i.e. where the answer is exact."""
    mask = rows >= threshold[:, None] if top else rows <= threshold[:, None]
    counts = np.count_nonzero(mask, axis=1)
    ok = counts >= j + 2
    first = np.full(rows.shape[0], np.nan)
    second = np.full(rows.shape[0], np.nan)
    if not ok.any():
        return first, second, ok
    if not ok.all():
        mask &= ok[:, None]
        counts = np.where(ok, counts, 0)
    cap = int(counts.max())
    values = rows[mask]  # row-major: grouped by row
    starts = np.cumsum(counts) - counts
    slot = np.arange(values.size) - np.repeat(starts, counts)
    # Sort each row's tail descending for `top` by sorting the negated values ascending.
    padded = np.full((rows.shape[0], cap), np.inf)
    padded[np.repeat(np.arange(rows.shape[0]), counts), slot] = -values if top else values
    padded = np.partition(padded, [j, j + 1], axis=1) if cap > 64 else np.sort(padded, axis=1)
    sign = -1.0 if top else 1.0
    first[ok] = sign * padded[ok, j]
    second[ok] = sign * padded[ok, j + 1]
    return first, second, ok


def _keep_share(n: int, j: int) -> float:
    # About 3× the needed tail plus ~6 binomial SDs: the exactness check in _tail_order_stats makes
    # a poor normal approximation cost time, never accuracy.
    return min(0.5, 3.0 * (j + 2) / n + 6.0 * np.sqrt((j + 2) / n) / np.sqrt(n))


def _quantile(rows: FloatArray, q: float, centre: FloatArray, spread: FloatArray) -> FloatArray:
    n = rows.shape[1]
    k, t = _positions(n, q)
    if k == 0 or k + 1 >= n:
        return np.quantile(rows, q, axis=1)
    if q <= 0.5:
        a, b, ok = _tail_order_stats(rows, k, centre + NormalDist().inv_cdf(_keep_share(n, k)) * spread, top=False)
    else:
        # Order statistics k, k+1 from the bottom are n−1−k, n−2−k from the top.
        j = n - 2 - k
        b, a, ok = _tail_order_stats(rows, j, centre - NormalDist().inv_cdf(_keep_share(n, j)) * spread, top=True)
    out = _lerp(a, b, t)
    if not ok.all():
        out[~ok] = np.quantile(rows[~ok], q, axis=1)
    return out


def median(x: FloatArray) -> float:
    """The median of a 1-D sample of at least one value: exactly `np.median(x)` (nan if it holds a nan).

    Why not np.median itself: it (and np.percentile, np.quantile) imports numpy.ma on first use, to ask
    whether its NaN check's result is a masked array, and that import took ~7 ms of a comparison's report
    start on a 2-vCPU Intel Xeon VM, on the path to its first measured pair (issue 17)."""
    n = x.size
    if np.isnan(x).any():
        return math.nan
    half = n // 2
    if n % 2:
        return float(np.partition(x, half)[half])
    part = np.partition(x, (half - 1, half))
    return float((part[half - 1] + part[half]) / 2.0)  # np.median's mean of the middle two


def percentiles(x: FloatArray, q: Sequence[float]) -> list[float]:
    """The `q` percentiles (0-100, linear interpolation) of a 1-D sample of at least one value: exactly
    `np.percentile(x, q)` (nan if it holds a nan), without numpy.ma (`median` says why)."""
    n = x.size
    if np.isnan(x).any():
        return [math.nan for _ in q]
    positions = [_positions(n, p / 100.0) for p in q]
    kth = sorted({i for k, _ in positions for i in (k, min(k + 1, n - 1))})
    part = np.partition(x, kth)
    return [float(_lerp(part[k], part[min(k + 1, n - 1)], t)) for k, t in positions]


def tail_quantiles(distributions: ArrayLike, lower: float, upper: float) -> tuple[FloatArray, FloatArray]:
    """The `lower` and `upper` quantiles (linear interpolation) of each row of a 2-D array.

    Exactly `np.quantile(d, [lower, upper], axis=1)`, for lower ≤ 0.5 ≤ upper, computed from the
    rows' tails only. NaN-free input is required (bootstrap replicates of finite data are finite).
    """
    d = np.asarray(distributions, dtype=np.float64)
    if d.ndim != 2:
        raise ValueError(f"distributions must be 2-D (one bootstrap distribution per row), got shape {d.shape}")
    if not (0.0 <= lower <= 0.5 <= upper <= 1.0):
        raise ValueError(f"need 0 ≤ lower ≤ 0.5 ≤ upper ≤ 1, got lower={lower}, upper={upper}")
    if d.shape[1] < _SMALL or d.shape[0] == 0:
        q = np.quantile(d, [lower, upper], axis=1)
        return q[0], q[1]
    # Replicates are exchangeable, so the first few hundred estimate centre and spread well enough
    # to place the thresholds.
    pilot = d[:, :_SMALL]
    centre, spread = pilot.mean(axis=1), pilot.std(axis=1)
    return _quantile(d, lower, centre, spread), _quantile(d, upper, centre, spread)
