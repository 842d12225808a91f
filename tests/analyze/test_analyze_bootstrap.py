"""The bootstrap engine against scipy.stats.bootstrap and against closed-form bootstrap moments."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from scipy import stats

from duetbench.analyze import bootstrap as bs
from duetbench.analyze.bootstrap import (
    bootstrap_distribution,
    hierarchical_mean_distribution,
    percentile_ci,
    percentile_interval,
)


@pytest.mark.parametrize("statistic", [np.mean, np.std])
def test_percentile_ci_close_to_scipy(statistic: object) -> None:
    x = np.random.default_rng(11).lognormal(0.0, 0.3, 40)
    ours = percentile_ci(x, statistic, confidence_level=0.95, n_resamples=10_000, random_state=1)
    ref = stats.bootstrap(
        (x,), statistic, method="percentile", confidence_level=0.95, n_resamples=10_000, rng=np.random.default_rng(2)
    ).confidence_interval
    # Different RNG streams: each 2.5% quantile of 10 000 replicates has a Monte Carlo SE of
    # sqrt(.025·.975/1e4)/φ(1.96) ≈ 0.027 bootstrap SEs, so two independent runs differ by
    # ~0.04 SE; 0.3 SE is > 7 of those.
    tol = 0.3 * ours.standard_error
    assert ours.low == pytest.approx(ref.low, abs=tol)
    assert ours.high == pytest.approx(ref.high, abs=tol)
    assert ours.estimate == pytest.approx(float(statistic(x)))  # type: ignore[operator]


def test_mean_distribution_matches_closed_form_moments() -> None:
    x = np.random.default_rng(5).normal(10.0, 2.0, 50)
    n_resamples = 20_000
    dist = bootstrap_distribution((x,), np.mean, n_resamples=n_resamples, rng=np.random.default_rng(6))
    # The bootstrap mean has mean x̄ and variance σ̂²/n with σ̂² the plug-in (ddof=0) variance.
    var = x.var() / x.size
    assert dist.mean() == pytest.approx(x.mean(), abs=5 * np.sqrt(var / n_resamples))
    # Relative SE of a sample variance of ~normal replicates is sqrt(2/B) ≈ 1%; allow 5%.
    assert dist.var(ddof=1) == pytest.approx(var, rel=0.05)


def _hierarchical_moments(runs: list[np.ndarray]) -> tuple[float, float]:
    means = np.array([r.mean() for r in runs])
    within = np.array([r.var() / r.size for r in runs])
    return float(means.mean()), float((means.var() + within.mean()) / len(runs))


def test_hierarchical_distribution_matches_closed_form_moments() -> None:
    # Var* = (Var_r(m_r) + mean_r(σ_r²/L_r)) / R for uniform draws of runs, then of iterations.
    rng = np.random.default_rng(8)
    runs = [rng.normal(10.0 + rng.normal(0, 1.0), 0.5 + r % 3, size=3 + 2 * (r % 4)) for r in range(12)]
    values = np.concatenate(runs)
    lengths = np.array([r.size for r in runs])
    n_resamples = 20_000
    dist = hierarchical_mean_distribution(values, lengths, n_resamples=n_resamples, rng=np.random.default_rng(9))
    mean, var = _hierarchical_moments(runs)
    assert dist.mean() == pytest.approx(mean, abs=5 * np.sqrt(var / n_resamples))
    assert dist.var(ddof=1) == pytest.approx(var, rel=0.05)


def test_resampling_is_uniform_unlike_pa() -> None:
    # pa's resampler picks the last of 10 indices with weight ~0.34/10 and has mean index ≈ 3.84;
    # uniform draws have mean 4.5. 40 000 replicates × 4 runs × 10 draws: SE of the mean index
    # is 2.87/sqrt(1.6e6) ≈ 0.0023, so 0.02 is ~9 SE and 3.84 is far outside.
    values = np.tile(np.arange(10.0), 4)
    dist = hierarchical_mean_distribution(values, np.full(4, 10), n_resamples=40_000, rng=np.random.default_rng(1))
    assert dist.mean() == pytest.approx(4.5, abs=0.02)
    last = bootstrap_distribution(
        (np.arange(10.0),), lambda x, axis: (x == 9).mean(axis=axis), n_resamples=20_000, rng=np.random.default_rng(2)
    )
    # 200 000 draws: SE of the frequency 0.1 is sqrt(.09/2e5) ≈ 0.00067; allow 0.004.
    assert last.mean() == pytest.approx(0.1, abs=0.004)


def test_small_chunks_give_the_same_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bs, "_CHUNK_ELEMENTS", 100)  # 3 replicates per chunk, last chunk partial
    x = np.random.default_rng(4).normal(0.0, 1.0, 30)
    dist = bootstrap_distribution((x,), np.mean, n_resamples=4001, rng=np.random.default_rng(3))
    assert dist.shape == (4001,)
    assert dist.var(ddof=1) == pytest.approx(x.var() / x.size, rel=0.1)  # sqrt(2/4001) ≈ 2.2% SE
    runs = [x[:10], x[10:13], x[13:]]
    h = hierarchical_mean_distribution(x, np.array([10, 3, 17]), n_resamples=4001, rng=np.random.default_rng(3))
    mean, var = _hierarchical_moments(runs)
    assert h.shape == (4001,)
    assert h.var(ddof=1) == pytest.approx(var, rel=0.1)


def test_ten_thousand_by_ten_thousand_stays_small() -> None:
    x = np.random.default_rng(0).random(10_000)
    tracemalloc.start()
    try:
        ci = percentile_ci(x, np.mean, n_resamples=10_000, random_state=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 150e6  # one full index matrix alone would take 800 MB
    assert ci.low < x.mean() < ci.high


def test_random_state_semantics() -> None:
    x = np.arange(1.0, 21.0)
    a = percentile_ci(x, np.mean, n_resamples=500, random_state=7)
    b = percentile_ci(x, np.mean, n_resamples=500, random_state=7)
    assert (a.low, a.high) == (b.low, b.high)
    gen = np.random.default_rng(7)
    c = percentile_ci(x, np.mean, n_resamples=500, random_state=gen)
    d = percentile_ci(x, np.mean, n_resamples=500, random_state=gen)
    assert (c.low, c.high) == (a.low, a.high)  # a Generator seeded 7 draws the same stream
    assert (d.low, d.high) != (c.low, c.high)  # and is consumed, not copied


def test_percentile_interval_quantiles() -> None:
    assert percentile_interval(np.arange(101.0), 0.9) == pytest.approx((5.0, 95.0))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="confidence_level"):
        percentile_ci([1.0, 2.0], np.mean, confidence_level=99)
    with pytest.raises(ValueError, match="n_resamples"):
        percentile_ci([1.0, 2.0], np.mean, n_resamples=0)
    with pytest.raises(ValueError, match="empty"):
        percentile_ci([], np.mean)
    with pytest.raises(ValueError, match="non-finite"):
        percentile_ci([1.0, np.nan], np.mean)
    with pytest.raises(ValueError, match="axis=-1"):
        percentile_ci([1.0, 2.0, 3.0], lambda x, axis: x, n_resamples=10)
