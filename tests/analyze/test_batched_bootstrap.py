"""Batched percentile bootstrap: exact tail quantiles, and CIs that agree with scipy's."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from duetbench.analyze.bootstrap import mean_cis, mean_distributions, resample_counts
from duetbench.analyze.quantile import tail_quantiles


@pytest.mark.parametrize("kind", ["normal", "lognormal", "discrete", "cauchy", "negative-skew"])
@pytest.mark.parametrize("levels", [(0.005, 0.995), (0.025, 0.975), (0.0, 1.0), (0.5, 0.5), (0.001, 0.999)])
def test_tail_quantiles_equal_numpy_quantile_exactly(kind: str, levels: tuple[float, float]) -> None:
    rng = np.random.default_rng(7)
    shape = (40, 4001)
    data = {
        "normal": lambda: rng.normal(size=shape),
        "lognormal": lambda: rng.lognormal(0.0, 1.5, size=shape),
        "discrete": lambda: rng.integers(0, 3, size=shape).astype(float),  # ties; forces the fallback
        "cauchy": lambda: rng.standard_cauchy(size=shape),
        "negative-skew": lambda: -rng.lognormal(0.0, 2.0, size=shape),
    }[kind]()
    low, high = tail_quantiles(data, *levels)
    ref = np.quantile(data, list(levels), axis=1)
    assert np.array_equal(low, ref[0]) and np.array_equal(high, ref[1])


@settings(max_examples=40, deadline=None)
@given(rows=st.integers(1, 5), n=st.integers(1, 2000), seed=st.integers(0, 2**32 - 1),
       level=st.floats(0.5, 0.999))
def test_tail_quantiles_any_shape(rows: int, n: int, seed: int, level: float) -> None:
    data = np.random.default_rng(seed).standard_t(3, size=(rows, n))
    low, high = tail_quantiles(data, 1 - level, level)
    ref = np.quantile(data, [1 - level, level], axis=1)
    assert np.array_equal(low, ref[0]) and np.array_equal(high, ref[1])


def test_tail_quantiles_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="2-D"):
        tail_quantiles(np.zeros(10), 0.1, 0.9)
    with pytest.raises(ValueError, match="lower"):
        tail_quantiles(np.zeros((2, 10)), 0.6, 0.9)


def test_resample_counts_are_uniform_resamples() -> None:
    counts = resample_counts(7, 20_000, np.random.default_rng(1))
    assert counts.shape == (20_000, 7) and (counts.sum(axis=1) == 7).all()
    # Each unit is drawn Binomial(7, 1/7) times per resample: mean 1, variance 6/7.
    assert np.allclose(counts.mean(axis=0), 1.0, atol=0.03)
    assert np.allclose(counts.var(axis=0), 6 / 7, atol=0.05)


@pytest.mark.parametrize("rows", [3, 50])  # both code paths: gather, and counts × data
def test_mean_distributions_are_means_of_resamples(rows: int) -> None:
    x = np.random.default_rng(2).normal(size=(rows, 15))
    dist = mean_distributions(x, n_resamples=4000, rng=np.random.default_rng(3))
    assert dist.shape == (rows, 4000)
    # Bootstrap distribution of a mean: centred on the sample mean, SD = population SD / sqrt(n).
    assert np.allclose(dist.mean(axis=1), x.mean(axis=1), atol=0.03)
    assert np.allclose(dist.std(axis=1), x.std(axis=1) / np.sqrt(15), rtol=0.06)


@pytest.mark.parametrize("rows,n", [(4, 20), (60, 20), (12, 300)])
def test_mean_cis_agree_with_scipy_within_monte_carlo_error(rows: int, n: int) -> None:
    x = np.random.default_rng(4).lognormal(0.0, 0.3, size=(rows, n))
    ours = mean_cis(x, confidence_level=0.99, n_resamples=10_000, random_state=5)
    theirs = stats.bootstrap((x,), np.mean, n_resamples=10_000, confidence_level=0.99, method="percentile",
                             axis=-1, rng=6).confidence_interval
    width = theirs.high - theirs.low
    # Monte Carlo SD of a 0.5% quantile bound at 10 000 replicates is ~2% of the width.
    assert np.all(np.abs(ours.low - theirs.low) < 0.1 * width)
    assert np.all(np.abs(ours.high - theirs.high) < 0.1 * width)
    assert abs(np.median((ours.high - ours.low) / width) - 1.0) < 0.03
    assert np.allclose(ours.estimate, x.mean(axis=1))


def test_mean_cis_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="finite"):
        mean_cis(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="2-D"):
        mean_cis(np.ones(5))
