"""Shuffle analysis — Bulej et al. 2020 §4.2 (Figures 4 and 5).

How much of a duet's narrow CI comes from synchronized interference? Keep every measurement, but
pair each A iteration with a random B iteration (across runs and iterations) before computing the
ratios: interference that hit both sides at once no longer cancels, everything else about the duet
stays. If the shuffled CIs are much wider than the original, the duet was winning by cancelling
synchronized interference; if they are about as wide, there was little of it to cancel. The
paper does not say how far it shuffled; see `shuffle_analysis` for our choice and why.

Both the original and the shuffled CIs here use the plain duet estimator (per-run geometric mean
of the pair ratios, percentile bootstrap over runs, no robust pair filter), so the two widths
differ only by the pairing. Vectorized over shuffles and replicates.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from duetbench.model.method import PAIRED_METHODS
from duetbench.model.table import IterationTable

from ._inputs import (
    RandomState,
    as_generator,
    check_confidence_level,
    check_n_resamples,
)
from .bootstrap import mean_cis
from .pairing import aduet_pairs, paired_runs


@dataclass(frozen=True)
class ShuffleResult:
    benchmark: str
    method: str
    original_width: float  # relative CI width with the measured pairing
    shuffled_widths: np.ndarray  # one per shuffle
    runs: int
    pairs: int

    @property
    def width_ratio(self) -> float:
        """Median shuffled width / original width: > 1 means the pairing narrowed the CI."""
        return float(np.median(self.shuffled_widths) / self.original_width)


def _padded(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Runs × longest run, NaN past each run's end."""
    out = np.full((lengths.size, int(lengths.max())), np.nan)
    out[np.arange(out.shape[1])[None, :] < lengths[:, None]] = values
    return out


def _relative_widths(log_gms: np.ndarray, cl: float, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Relative CI width of the duet ratio from per-run mean log ratios, one row per pairing."""
    # One set of resamples serves every row (mean_cis): each row still gets an ordinary bootstrap;
    # sharing only correlates their Monte Carlo errors.
    ci = mean_cis(log_gms, confidence_level=cl, n_resamples=n_resamples, random_state=rng)
    return (np.exp(ci.high) - np.exp(ci.low)) / np.exp(ci.estimate)


def _shuffled_log_gms(log_a: np.ndarray, log_b: np.ndarray, n_shuffles: int, across_runs: bool,
                      rng: np.random.Generator) -> np.ndarray:
    """Per-run mean log ratios (shuffles × runs) after re-pairing; inputs runs × slots, NaN-padded.

    Across runs, run r of A meets run π(r) ≠ r of B, π(r) = σ[(σ⁻¹[r] + k) mod R] with random σ
    and k ∈ 1..R−1 (a derangement), so B's run effect stays whole but is no longer A's; within
    the run pair the B iterations are permuted. Pairs past the shorter run of a pair are dropped.
    """
    n_runs = log_b.shape[0]
    runs = np.arange(n_runs)
    if across_runs:
        sigma = rng.permuted(np.broadcast_to(runs, (n_shuffles, n_runs)), axis=1)
        inverse = np.argsort(sigma, axis=1)
        k = rng.integers(1, n_runs, size=(n_shuffles, 1))
        partner = np.take_along_axis(sigma, (inverse + k) % n_runs, axis=1)
    else:
        partner = np.broadcast_to(runs, (n_shuffles, n_runs))
    b = log_b[partner]  # shuffles × runs × slots
    # Random order within each run, valid slots first (NaN slots get keys ≥ 1).
    keys = rng.random(b.shape) + np.isnan(b)
    b = np.take_along_axis(b, np.argsort(keys, axis=-1), axis=-1)
    diff = b - log_a[None, :, :]
    valid = ~np.isnan(diff)
    counts = valid.sum(axis=-1)
    if (counts == 0).any():
        raise ValueError("a re-paired run has no pairs left; the shuffle analysis needs runs with at least one pair")
    return np.where(valid, diff, 0.0).sum(axis=-1) / counts


def shuffle_analysis(
    group: IterationTable,
    method: str = "duet",
    *,
    n_shuffles: int = 20,
    across_runs: bool = True,
    confidence_level: float = 0.99,
    n_resamples: int = 10_000,
    random_state: RandomState = None,
    min_overlap_rate: float = 0.4,
) -> ShuffleResult:
    """Original vs randomly re-paired relative CI width of one duet benchmark (sync or async).

    Sync duet: pairs are (run, index) matches; async duet: the overlap pairs (m =
    `min_overlap_rate`) grouped by run. A shuffle pairs every A iteration with a B iteration of
    another run (`across_runs`, the default: removes synchronized interference at both levels,
    the shared run conditions and the shared moments) or of the same run (only the moments).
    B's iterations are never spread over all runs: that would average B's run effects away and
    make the shuffled CI too narrow whenever runs differ.
    """
    if method not in PAIRED_METHODS:
        raise ValueError("the shuffle analysis re-pairs duet measurements; "
                         f"method must be duet or aduet, got {method!r}")
    cl = check_confidence_level(confidence_level)
    n_resamples = check_n_resamples(n_resamples)
    if int(n_shuffles) != n_shuffles or n_shuffles < 1:
        raise ValueError(f"n_shuffles must be a positive integer, got {n_shuffles!r}")
    rng = as_generator(random_state)
    m = group.measured()
    if method == "duet":
        a_runs, b_runs = paired_runs(m)
        lengths = np.array([r.size for r in a_runs], dtype=np.intp)
        a = np.concatenate(a_runs) if a_runs else np.empty(0)
        b = np.concatenate(b_runs) if b_runs else np.empty(0)
    else:
        ap = aduet_pairs(m, min_overlap_rate)
        a = ap.a_value[ap.pairs.a_index]
        b = ap.b_value[ap.pairs.b_index]
        lengths = np.unique(ap.pair_run, return_counts=True)[1].astype(np.intp)
    if lengths.size < 2:
        raise ValueError(f"{group.benchmark[0] if len(group) else '?'} ({method}): "
                         "the shuffle analysis needs pairs from at least 2 runs")
    log_a, log_b = _padded(np.log(a), lengths), _padded(np.log(b), lengths)
    original = np.nanmean(log_b - log_a, axis=1)[None, :]
    shuffled = _shuffled_log_gms(log_a, log_b, int(n_shuffles), across_runs, rng)
    widths = _relative_widths(np.concatenate([original, shuffled]), cl, n_resamples, rng)
    return ShuffleResult(
        benchmark=str(group.benchmark[0]),
        method=method,
        original_width=float(widths[0]),
        shuffled_widths=widths[1:],
        runs=int(lengths.size),
        pairs=int(b.size),
    )


def shuffle_summary(results: Iterable[ShuffleResult]) -> dict[str, float]:
    """Geometric mean over benchmarks of the width ratio, per method — the "analogue of Table 1
    without synchronized interference" of Bulej et al. 2020 §4.2, read the other way round (shuffled over
    original)."""
    by_method: dict[str, list[float]] = {}
    for r in results:
        by_method.setdefault(r.method, []).append(math.log(r.width_ratio))
    return {m: math.exp(float(np.mean(v))) for m, v in by_method.items()}
