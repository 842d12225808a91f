"""Similarity of two samples from the Kullback–Leibler divergence of their kernel densities.

The KLD stability criterion of Laaber et al. 2020 §4.2.3 (after He et al.), computed the
way docs/notes/seed_tools.md §3.1 describes the reference JMH fork, minus its resampling noise.
"""
from __future__ import annotations

import math

import numpy as np

from ._inputs import FloatArray

#: Grid points ("strips") over the common range, as in the reference implementation.
GRID_POINTS = 1000
#: Above this many values a sample is represented by this many evenly spaced quantiles when the
#: density is evaluated (the bandwidth still comes from the whole sample): quantile spacing is
#: far below the bandwidth where the mass is, and evaluation cost stays bounded (points × grid).
KDE_MAX_POINTS = 256


def silverman_bandwidth(x: FloatArray) -> float:
    """h = 1.06 · min(sd, IQR/1.34) · n^(−1/5): Silverman's rule of thumb, the bandwidth of the
    reference's KDE (smile's KernelDensity). When the IQR is 0 but the sd is not (a sample
    with a heavy central tie) the sd alone is used, where the reference would get h = 0."""
    n = x.size
    if n < 2:
        return 0.0
    sd = float(x.std(ddof=1))
    q1, q3 = np.percentile(x, [25.0, 75.0])
    iqr = float(q3 - q1)
    spread = min(sd, iqr / 1.34) if iqr > 0 else sd
    return 1.06 * spread * n ** (-0.2)


def fenced_range(x: FloatArray) -> tuple[float, float]:
    """[Q1 − 1.5·IQR, Q3 + 1.5·IQR], the lower end clipped at 0 (times are positive)."""
    q1, q3 = np.percentile(x, [25.0, 75.0])
    iqr = float(q3 - q1)
    return max(0.0, float(q1) - 1.5 * iqr), float(q3) + 1.5 * iqr


def _thin(x: FloatArray) -> FloatArray:
    if x.size <= KDE_MAX_POINTS:
        return x
    # Deterministic thinning (evenly spaced quantiles) rather than the reference's random
    # 1000-value resample: the same data always give the same similarity.
    return np.quantile(x, (np.arange(KDE_MAX_POINTS) + 0.5) / KDE_MAX_POINTS)


def _density(x: FloatArray, h: float, grid: FloatArray) -> FloatArray:
    """Gaussian kernel density of `x` with bandwidth h on `grid` (what scipy's gaussian_kde
    computes with bw_method = h/sd; written out because scipy's per-call linear algebra costs
    more than the sum itself on these 1-D grids)."""
    x = _thin(x)
    z = (grid[:, None] - x[None, :]) / h
    return np.exp(-0.5 * z * z).sum(axis=1) / (x.size * h * math.sqrt(2.0 * math.pi))


def _kl(p: FloatArray, q: FloatArray) -> float:
    both = (p > 0) & (q > 0)
    if not both.any():
        return math.inf
    return float(np.sum(p[both] * (np.log(p[both]) - np.log(q[both]))))


def kld_similarity(p_sample: FloatArray, q_sample: FloatArray) -> float:
    """2^−KL(P‖Q) · 2^−KL(Q‖P) ∈ [0, 1] for two samples; 1 means indistinguishable densities.

    Both densities are Gaussian KDEs with the Silverman bandwidth, evaluated on 1000 equally
    spaced points over the union of the two IQR-fenced ranges; KL sums p·ln(p/q) over grid
    points where both densities are non-zero (+∞, so similarity 0, if there are none).
    Differences from the reference (docs/notes/seed_tools.md §3.1): no random 1000-value resample of
    each sample (the result is a function of the data; large samples are evaluated through
    256 quantiles), and the densities are normalized to
    sum to 1 over the grid, so each KL is a true discrete divergence ≥ 0 and the similarity
    never exceeds 1 (the reference's unnormalized Riemann sums can go negative when mass lies
    outside the fenced range). Edge cases: a common range of width 0 (both samples the same
    constant) gives 1.0; a constant sample against a spread one gives 0.0 (a point mass has no
    density to compare); fewer than 2 values in either sample gives nan (undefined).
    """
    p_x, q_x = np.asarray(p_sample, dtype=np.float64), np.asarray(q_sample, dtype=np.float64)
    if p_x.size < 2 or q_x.size < 2:
        return math.nan
    (p_lo, p_hi), (q_lo, q_hi) = fenced_range(p_x), fenced_range(q_x)
    lo, hi = min(p_lo, q_lo), max(p_hi, q_hi)
    if hi <= lo:
        return 1.0
    h_p, h_q = silverman_bandwidth(p_x), silverman_bandwidth(q_x)
    if h_p == 0.0 or h_q == 0.0:
        return 0.0
    grid = np.linspace(lo, hi, GRID_POINTS)
    p, q = _density(p_x, h_p, grid), _density(q_x, h_q, grid)
    p_sum, q_sum = p.sum(), q.sum()
    if p_sum == 0.0 or q_sum == 0.0:
        return 0.0
    p, q = p / p_sum, q / q_sum
    return float(2.0 ** (-_kl(p, q)) * 2.0 ** (-_kl(q, p)))
