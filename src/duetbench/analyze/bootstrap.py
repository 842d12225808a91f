"""Vectorized percentile bootstrap: flat (one level) and hierarchical (runs, then iterations).

Replicates are drawn as index matrices (replicates × n) in chunks of about `_GATHER_CHUNK`
indices, small enough that the indices and the gathered values stay in cache. Indices are uniform
(`Generator.integers`), unlike `pa`'s normal-draws-mod-n resampler (docs/notes/seed_tools.md §3.2),
which over-samples middle indices, and drawn in the narrowest unsigned type that holds them
(`draw_indices`): drawing them is most of a bootstrap's time, and numpy's bounded generator
makes two 16-bit draws from one 32-bit word.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache

import numpy as np
from numpy.typing import ArrayLike
from threadpoolctl import ThreadpoolController

from ._inputs import (
    FloatArray,
    IntArray,
    RandomState,
    as_generator,
    as_sample,
    check_confidence_level,
    check_n_resamples,
)
from .quantile import tail_quantiles

#: Upper bound on gathered elements per chunk of the hierarchical bootstrap (~32 MB of float64).
_CHUNK_ELEMENTS = 1 << 22
#: Indices drawn and gathered per chunk of a flat bootstrap: 128 KB of uint16 indices and 512 KB
#: of gathered values stay in cache. With the narrow indices: 1.4× faster than 4 M-element
#: chunks of int64 indices for n = 20 and n = 1500 (10 000 replicates).
_GATHER_CHUNK = 1 << 16

Statistic = Callable[..., ArrayLike]


@dataclass(frozen=True)
class BootstrapCI:
    """A percentile bootstrap interval with the statistic on the original sample."""

    estimate: float
    low: float
    high: float
    confidence_level: float
    n_resamples: int
    standard_error: float
    distribution: FloatArray = field(repr=False, compare=False)


def draw_indices(rng: np.random.Generator, n: int, shape: tuple[int, ...], *, narrow: bool = True) -> IntArray:
    """Uniform indices in [0, n) (draws with replacement, Efron's bootstrap), by default in the
    narrowest unsigned integer type holding n − 1. numpy's bounded generator is unbiased for every
    type (Lemire's method with rejection); the narrow types only spend fewer random bits per draw.
    `narrow=False` draws int64 like `rng.integers(0, n, shape)`: the random stream of other tools'
    scripts, for reproducing their published numbers draw for draw."""
    dtype = np.int64 if not narrow else np.uint16 if n <= 1 << 16 else np.uint32 if n <= 1 << 32 else np.int64
    return rng.integers(0, n, size=shape, dtype=dtype)


def percentile_interval(distribution: ArrayLike, confidence_level: float) -> tuple[float, float]:
    """The (α/2, 1 − α/2) quantiles of a bootstrap distribution: the percentile interval of
    Bulej et al. 2020 §3 step 5 (after Hesterberg).

    Quantiles are linearly interpolated, as `scipy.stats.bootstrap(method="percentile")` does.
    """
    cl = check_confidence_level(confidence_level)
    dist = np.asarray(distribution, dtype=np.float64)
    alpha = 1.0 - cl
    low, high = np.quantile(dist, [alpha / 2.0, 1.0 - alpha / 2.0])
    return float(low), float(high)


def bootstrap_distribution(
    samples: Sequence[ArrayLike],
    statistic: Statistic,
    *,
    n_resamples: int,
    rng: np.random.Generator,
    narrow_indices: bool = True,
) -> FloatArray:
    """Bootstrap replicates of `statistic` over equally long samples resampled with shared indices.

    Sharing indices keeps rows of several arrays together (e.g. weights and weighted values of
    one unit), like `scipy.stats.bootstrap(paired=True)`. `statistic(*resampled, axis=-1)` gets
    2-D arrays (replicates × n) and must return one value per replicate.
    Standard nonparametric bootstrap (Efron), as used by Bulej et al. 2020 §3 step 5.
    `narrow_indices=False` reproduces `rng.integers(0, n, (n_resamples, n))` draw for draw (see
    `draw_indices`).
    """
    n_resamples = check_n_resamples(n_resamples)
    arrays = [np.asarray(s, dtype=np.float64) for s in samples]
    if not arrays:
        raise ValueError("bootstrap needs at least one sample")
    n = arrays[0].size
    if n == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if any(a.ndim != 1 or a.size != n for a in arrays):
        raise ValueError("samples resampled together must be 1-D and equally long")
    out = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _GATHER_CHUNK // n)
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        idx = draw_indices(rng, n, (m, n), narrow=narrow_indices)
        values = np.asarray(statistic(*(a[idx] for a in arrays), axis=-1), dtype=np.float64)
        if values.shape != (m,):
            raise ValueError(
                "statistic must reduce along axis=-1 to one value per replicate: "
                f"got shape {values.shape} for input {(m, n)}"
            )
        out[start : start + m] = values
    return out


@dataclass(frozen=True)
class BootstrapCIs:
    """Percentile bootstrap intervals of the mean of many samples, one entry per sample (row)."""

    estimate: FloatArray
    low: FloatArray
    high: FloatArray
    confidence_level: float
    n_resamples: int


#: From this many rows on, resampling counts and one matrix product beat gathering each row.
_GEMM_ROWS = 8
#: Resampling counts are made in blocks of about this many cells: the scattered increments of
#: `np.bincount` stay in cache (measured 5× faster for n = 1500 than 4 M-cell blocks).
_COUNT_CHUNK = 1 << 16


@cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """How often each of `n` units is drawn in each of `n_resamples` ordinary bootstrap resamples
    (replicates × n, rows summing to n): uniform draws with replacement (Efron), as float64 so that
    a resampled sum over any number of samples is one matrix product."""
    # Offsetting each row's indices by row × n makes one bincount count every row at once.
    offsets = np.arange(0, n_resamples * n, n, dtype=np.intp)[:, None]
    flat = (draw_indices(rng, n, (n_resamples, n)) + offsets).ravel()
    return np.bincount(flat, minlength=n_resamples * n).reshape(n_resamples, n).astype(np.float64)


def mean_distributions(values: ArrayLike, *, n_resamples: int, rng: np.random.Generator) -> FloatArray:
    """Bootstrap replicates of the mean of every row of `values` (rows × n → rows × n_resamples).

    All rows share one set of resamples, as `scipy.stats.bootstrap` does for batched data
    (`axis=-1`): each row gets an ordinary bootstrap (Bulej et al. 2020 §3 step 5), only their Monte Carlo
    errors are correlated. The mean is linear, so with many rows the replicates are one product
    of the data with the resampling counts instead of a gather of rows × replicates × n values.
    """
    n_resamples = check_n_resamples(n_resamples)
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] == 0:
        raise ValueError(f"values must be 2-D (one sample per row) with at least one column, got shape {x.shape}")
    rows, n = x.shape
    out = np.empty((rows, n_resamples))
    if rows >= _GEMM_ROWS:
        step = max(1, _COUNT_CHUNK // n)
        # One BLAS thread: these products are small, and on a busy 2-CPU machine (a campaign's
        # summary runs between measurements) OpenBLAS's spinning threads made them 40× slower.
        with _blas().limit(limits=1, user_api="blas"):
            for start in range(0, n_resamples, step):
                m = min(step, n_resamples - start)
                out[:, start : start + m] = x @ resample_counts(n, m, rng).T
        out /= n
        return out
    step = max(1, _GATHER_CHUNK // n)
    for start in range(0, n_resamples, step):
        m = min(step, n_resamples - start)
        idx = draw_indices(rng, n, (m, n))
        out[:, start : start + m] = x[:, idx].mean(axis=-1)
    return out


def mean_cis(
    values: ArrayLike,
    *,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
) -> BootstrapCIs:
    """Percentile bootstrap CIs of the mean of every row of `values` (rows × n), in one pass.

    The batched form of `percentile_ci(x, np.mean)`: what the duet ratio CI (Bulej et al. 2020 §3) needs for
    every benchmark of a campaign, or every re-pairing of the shuffle analysis (§4.2), at once.
    Rows must be finite and equally long (pad nothing: a shorter sample is a different bootstrap).
    """
    x = np.asarray(values, dtype=np.float64)
    if not np.isfinite(x).all():
        raise ValueError("values must be finite (no NaN or infinity)")
    cl = check_confidence_level(confidence_level)
    dist = mean_distributions(x, n_resamples=n_resamples, rng=as_generator(random_state))  # checks the shape
    alpha = 1.0 - cl
    low, high = tail_quantiles(dist, alpha / 2.0, 1.0 - alpha / 2.0)
    return BootstrapCIs(estimate=x.mean(axis=1), low=low, high=high, confidence_level=cl, n_resamples=dist.shape[1])


def percentile_ci(
    data: ArrayLike,
    statistic: Statistic,
    *,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
) -> BootstrapCI:
    """Percentile bootstrap CI of `statistic` for a 1-D sample.

    `statistic(x, axis=-1)` must accept a 2-D array (replicates × n) and reduce along the last
    axis (np.mean, np.median and scipy.stats.gmean qualify). The sample must be finite.
    Generic engine behind Bulej et al. 2020 §3 step 5 and the standard method of §4.1.
    """
    x = as_sample(data, "data")
    cl = check_confidence_level(confidence_level)
    rng = as_generator(random_state)
    dist = bootstrap_distribution((x,), statistic, n_resamples=n_resamples, rng=rng)
    low, high = percentile_interval(dist, cl)
    estimate = float(np.asarray(statistic(x, axis=-1)))
    return BootstrapCI(
        estimate=estimate,
        low=low,
        high=high,
        confidence_level=cl,
        n_resamples=dist.size,
        standard_error=float(dist.std(ddof=1)) if dist.size > 1 else float("nan"),
        distribution=dist,
    )


def hierarchical_mean_distribution(
    values: FloatArray,
    lengths: IntArray,
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> FloatArray:
    """Two-level bootstrap replicates of the mean of run means (Kalibera & Jones).

    `values` holds the iterations run after run, `lengths[r]` of them for run r. Each replicate
    draws R runs with replacement, then, inside each drawn run, as many iterations as it has,
    with replacement; the statistic is the mean of the resampled run means. Used by the
    sequential ("standard") method of Bulej et al. 2020 §4.1 and docs/methods.md.
    Every level is resampled uniformly, unlike `pa` (docs/notes/seed_tools.md §3.2).
    """
    n_resamples = check_n_resamples(n_resamples)
    values = np.asarray(values, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.intp)
    if lengths.size == 0 or (lengths < 1).any() or int(lengths.sum()) != values.size:
        raise ValueError("lengths must be positive and add up to the number of values")
    n_runs = lengths.size
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    widest = int(lengths.max())
    # Ragged runs are drawn on a (replicates × runs × longest run) grid; slots past a run's
    # length are masked out, so every run still gets exactly its own number of draws.
    slot = np.arange(widest)
    out = np.empty(n_resamples, dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // (n_runs * widest))
    for start in range(0, n_resamples, rows):
        m = min(rows, n_resamples - start)
        runs = rng.integers(0, n_runs, size=(m, n_runs))
        run_len = lengths[runs]
        within = rng.integers(0, run_len[..., None], size=(m, n_runs, widest))
        picked = values[offsets[runs][..., None] + within]
        picked *= slot < run_len[..., None]
        out[start : start + m] = (picked.sum(axis=-1) / run_len).mean(axis=-1)
    return out
