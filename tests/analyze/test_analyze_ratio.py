"""Ratio and difference CIs: closed forms, scipy references, the robust filter, bad input."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from duetbench.analyze.ratio import (
    RatioResult,
    difference_of_means_ci,
    duet_ratio_ci,
    ratio_of_means_ci,
    ratio_of_ratios,
    robust_pair_filter,
    sequential_cis,
)

# --- closed forms -------------------------------------------------------------------------

def test_constant_ratio_gives_a_point_interval() -> None:
    a = np.array([2.0, 3.0, 5.0, 7.0])
    r = duet_ratio_ci(a, 1.25 * a, n_resamples=200, random_state=0)
    assert (r.estimate, r.low, r.high) == pytest.approx((1.25, 1.25, 1.25))
    assert r.n == 4 and r.confidence_level == 0.99


def test_geometric_mean_identities() -> None:
    # Flat: pair ratios 1 and 4 → ggms = sqrt(1·4) = 2.
    assert duet_ratio_ci([1.0, 1.0], [1.0, 4.0], n_resamples=100).estimate == pytest.approx(2.0)
    # Per run (ragged): run 0 ratios 2 and 8 → gms 4; run 1 ratio 1 → gms 1; ggms = sqrt(4·1) = 2,
    # not the pooled geometric mean (2·8·1)^(1/3) ≈ 2.52: runs weigh equally.
    r = duet_ratio_ci([[1.0, 1.0], [3.0]], [[2.0, 8.0], [3.0]], n_resamples=100, interval="bootstrap")
    assert r.estimate == pytest.approx(2.0)
    assert r.n == 2
    # Bootstrap of two run values can only give means of {log 4, log 1}: bounds within [1, 4]
    # (which is why it is too narrow with few runs) ...
    assert 1.0 <= r.low <= r.high <= 4.0
    # ... while the t interval over 2 runs has 1 degree of freedom: log 2 ± 63.66 · (log 4)/2 / √2.
    t = duet_ratio_ci([[1.0, 1.0], [3.0]], [[2.0, 8.0], [3.0]])
    half = 63.65674 * math.log(4.0) / math.sqrt(2.0) / math.sqrt(2.0)
    assert t.interval == "t"
    assert (t.estimate, math.log(t.low), math.log(t.high)) == pytest.approx(
        (2.0, math.log(2.0) - half, math.log(2.0) + half), rel=1e-5)


def test_two_dimensional_array_is_runs() -> None:
    a = np.ones((3, 4))
    b = np.array([[1.0] * 4, [2.0] * 4, [4.0] * 4])
    assert duet_ratio_ci(a, b, n_resamples=100).estimate == pytest.approx(2.0)


def test_ratio_of_means_closed_form() -> None:
    r = ratio_of_means_ci([2.0, 2.0, 2.0], [3.0, 3.0, 3.0], n_resamples=200, random_state=1)
    assert (r.estimate, r.low, r.high) == pytest.approx((1.5, 1.5, 1.5))
    # Mean of run means (runs weigh equally): A = (1 + 3)/2 = 2, B = (3 + 5)/2 = 4.
    r = ratio_of_means_ci([[1.0, 1.0, 1.0], [3.0]], [[3.0], [5.0, 5.0]], n_resamples=200, random_state=1)
    assert r.estimate == pytest.approx(2.0)
    assert r.n == 2
    # Two runs whose A means (1, 3) are not significantly above 0 at 99%: Fieller's set is
    # unbounded, reported as all a ratio of times can be.
    assert (r.low, r.high) == (0.0, math.inf)


def test_difference_closed_form() -> None:
    d = difference_of_means_ci([10.0, 10.0, 10.0], [12.0, 12.0, 12.0, 12.0], n_resamples=200, random_state=0)
    assert (d.estimate, d.low, d.high) == pytest.approx((2.0, 2.0, 2.0))
    assert (d.relative_estimate, d.relative_low, d.relative_high) == pytest.approx((0.2, 0.2, 0.2))
    assert (d.n_a, d.n_b) == (3, 4)


# --- independent references ---------------------------------------------------------------

def test_duet_ci_close_to_scipy_bootstrap_of_geometric_mean() -> None:
    rng = np.random.default_rng(21)
    base = rng.lognormal(0.0, 0.2, 30)
    a = base * rng.lognormal(0.0, 0.02, 30)
    b = 1.04 * base * rng.lognormal(0.0, 0.02, 30)
    ours = duet_ratio_ci(a, b, confidence_level=0.99, n_resamples=10_000, random_state=3, interval="bootstrap")
    ratios = b / a
    ref = stats.bootstrap(
        (ratios,), stats.gmean, method="percentile", confidence_level=0.99, n_resamples=10_000,
        rng=np.random.default_rng(4),
    ).confidence_interval
    assert ours.estimate == pytest.approx(stats.gmean(ratios))
    # Compare on the log scale in bootstrap SEs σ* = sd(log ratio)/sqrt(n): a 0.5% quantile of
    # 10 000 replicates has MC SE sqrt(.005·.995/1e4)/φ(2.576) ≈ 0.049 σ*, the difference of
    # two independent streams ≈ 0.069 σ*; 0.3 σ* is > 4 of those.
    sigma = np.log(ratios).std() / math.sqrt(ratios.size)
    assert math.log(ours.low) == pytest.approx(math.log(ref.low), abs=0.3 * sigma)
    assert math.log(ours.high) == pytest.approx(math.log(ref.high), abs=0.3 * sigma)


def test_ratio_of_means_flat_matches_independent_bootstrap_reference() -> None:
    # Reference: scipy's bootstrap distributions of each mean, drawn independently.
    rng = np.random.default_rng(5)
    a, b = rng.normal(100, 5, 25), rng.normal(103, 5, 25)
    ours = ratio_of_means_ci(a, b, confidence_level=0.95, n_resamples=10_000, random_state=6, interval="bootstrap")
    kw = dict(method="percentile", n_resamples=10_000)
    da = stats.bootstrap((a,), np.mean, rng=np.random.default_rng(7), **kw).bootstrap_distribution
    db = stats.bootstrap((b,), np.mean, rng=np.random.default_rng(8), **kw).bootstrap_distribution
    ref = np.quantile(db / da, [0.025, 0.975])
    se = np.std(db / da)
    # 2.5% quantiles: MC SE ≈ 0.027 SE each, ≈ 0.04 for the difference; allow 0.3 SE.
    assert ours.low == pytest.approx(ref[0], abs=0.3 * se)
    assert ours.high == pytest.approx(ref[1], abs=0.3 * se)
    assert ours.estimate == pytest.approx(b.mean() / a.mean())


# --- robust pair filter -------------------------------------------------------------------

def test_sequential_cis_share_replicates_of_run_means() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.lognormal(0, 0.05, 15), rng.lognormal(0.03, 0.05, 12)
    ratio, diff = sequential_cis(a, b, confidence_level=0.95, n_resamples=2000, random_state=9)
    # Same generator state, same draws: exactly what the two separate functions give.
    assert ratio == ratio_of_means_ci(a, b, confidence_level=0.95, n_resamples=2000, random_state=9)
    assert diff == difference_of_means_ci(a, b, confidence_level=0.95, n_resamples=2000, random_state=9)
    # Replicate by replicate mean(B*)/mean(A*) − 1 = (mean(B*) − mean(A*))/mean(A*), so the two
    # intervals exclude 1 (resp. 0) together.
    assert (ratio.low > 1) == (diff.low > 0) and (ratio.high < 1) == (diff.high < 0)


def test_sequential_cis_keep_the_hierarchical_ratio_for_runs_of_iterations() -> None:
    rng = np.random.default_rng(4)
    a = [rng.lognormal(0, 0.05, 30) for _ in range(8)]
    b = [rng.lognormal(0.02, 0.05, 30) for _ in range(8)]
    ratio, diff = sequential_cis(a, b, n_resamples=2000, random_state=2)
    assert diff == difference_of_means_ci(a, b, n_resamples=2000, random_state=2)
    ref = ratio_of_means_ci(a, b, n_resamples=2000, random_state=5)
    assert ratio.estimate == pytest.approx(ref.estimate)
    # A different draw of the same two-level bootstrap: bounds agree to Monte Carlo error.
    assert ratio.low == pytest.approx(ref.low, rel=5e-3) and ratio.high == pytest.approx(ref.high, rel=5e-3)


def test_robust_filter_keeps_clean_data() -> None:
    # Lognormal times with 1% noise per side: log ratios ~ N(0, 1.41%); a 5-sigma rule drops
    # a pair with probability 5.7e-7, i.e. 0.006 expected among 10 000.
    rng = np.random.default_rng(30)
    a = rng.lognormal(0.0, 0.01, 10_000)
    b = rng.lognormal(0.0, 0.01, 10_000)
    keep = robust_pair_filter(np.log(b / a))
    assert (~keep).sum() <= 1


def test_robust_filter_drops_isolated_outliers() -> None:
    rng = np.random.default_rng(31)
    lr = rng.normal(0.02, 0.014, 100)
    lr[[3, 50, 77]] += np.log(1.12)
    lr[10] -= np.log(1.10)
    keep = robust_pair_filter(lr)
    assert set(np.flatnonzero(~keep)) == {3, 10, 50, 77}


def test_robust_filter_caps_removals_most_extreme_first() -> None:
    lr = np.zeros(40)
    lr[:12] = np.linspace(0.10, 0.21, 12)  # 30% outliers, the last four the largest
    keep = robust_pair_filter(lr)  # MAD is 0, so the 0.5% floor decides what is an outlier
    assert (~keep).sum() == 4  # cap: floor(10% of 40)
    assert set(np.flatnonzero(~keep)) == {8, 9, 10, 11}


def test_robust_filter_inactive_below_ten_pairs_and_honours_floor() -> None:
    assert robust_pair_filter([0.0, 0.0, 0.0, 0.0, 0.5]).all()
    quiet = np.zeros(20)
    quiet[0] = 0.004  # within the 0.5% floor although the MAD is 0
    assert robust_pair_filter(quiet).all()
    quiet[0] = 0.006
    assert not robust_pair_filter(quiet)[0]


# --- bad input ----------------------------------------------------------------------------

BAD = [
    ([], [], "empty"),
    ([1.0], [1.1], "only 1 value"),
    ([1.0, float("nan")], [1.0, 1.0], "non-finite"),
    ([1.0, 0.0], [1.0, 1.0], "times must be > 0"),
    ([1.0, -2.0], [1.0, 1.0], "times must be > 0"),
    ([[1.0, 2.0]], [[1.0, 2.0]], "1 run"),
    ([[1.0, 2.0], []], [[1.0, 2.0], []], "run 1 is empty"),
    ([1.0, [2.0]], [1.0, 2.0], "mixes scalars and arrays"),
    ("12", "13", "string"),
]


@pytest.mark.parametrize(("a", "b", "message"), BAD)
@pytest.mark.parametrize("fn", [duet_ratio_ci, ratio_of_means_ci, difference_of_means_ci])
def test_bad_input_is_a_clear_value_error(fn: object, a: object, b: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        fn(a, b, n_resamples=10)  # type: ignore[operator]


def test_duet_requires_pairing() -> None:
    with pytest.raises(ValueError, match="must be paired: a has 3 values, b has 2"):
        duet_ratio_ci([1.0, 2.0, 3.0], [1.0, 2.0], n_resamples=10)
    with pytest.raises(ValueError, match="run 1 has 2 iterations in a, 1 in b"):
        duet_ratio_ci([[1.0], [1.0, 2.0]], [[1.0], [1.0]], n_resamples=10)
    with pytest.raises(ValueError, match="same shape"):
        duet_ratio_ci([1.0, 2.0], [[1.0], [2.0]], n_resamples=10)


def test_robust_filter_rejects_nan() -> None:
    with pytest.raises(ValueError, match="non-finite"):
        robust_pair_filter([0.0, float("nan")])


# --- ratio_of_ratios: X/Y from X/R and Y/R (duet compare R X Y's summary) ---------------------------------

def _ratio(estimate: float, low: float, high: float, n: int = 10) -> RatioResult:
    return RatioResult(estimate=estimate, low=low, high=high, confidence_level=0.99, n=n, interval="t")


def test_ratio_of_ratios_with_an_exact_side_keeps_the_other_interval() -> None:
    x = _ratio(2.0, 1.5, 3.0)
    one = _ratio(1.0, 1.0, 1.0)
    r = ratio_of_ratios(x, one)
    assert (r.estimate, r.low, r.high) == pytest.approx((2.0, 1.5, 3.0))
    assert r.interval == "mover" and r.confidence_level == 0.99
    # 1/x: the interval turned over, exactly
    inv = ratio_of_ratios(one, x)
    assert (inv.estimate, inv.low, inv.high) == pytest.approx((0.5, 1 / 3.0, 1 / 1.5))


def test_ratio_of_ratios_adds_log_half_widths_in_quadrature() -> None:
    # log-symmetric intervals: half-widths 0.3 and 0.4 on the log scale combine to 0.5
    x = _ratio(4.0, 4.0 * math.exp(-0.3), 4.0 * math.exp(0.3))
    y = _ratio(2.0, 2.0 * math.exp(-0.4), 2.0 * math.exp(0.4))
    r = ratio_of_ratios(x, y)
    assert r.estimate == pytest.approx(2.0)
    assert (math.log(r.low / 2.0), math.log(r.high / 2.0)) == pytest.approx((-0.5, 0.5))
    # asymmetric: the lower end takes x's lower and y's upper distance, the upper end the other two
    x = _ratio(1.0, math.exp(-0.3), math.exp(0.1))
    y = _ratio(1.0, math.exp(-0.2), math.exp(0.4))
    r = ratio_of_ratios(x, y)
    assert (math.log(r.low), math.log(r.high)) == pytest.approx((-0.5, math.hypot(0.1, 0.2)))


def test_ratio_of_ratios_keeps_an_unbounded_end_unbounded() -> None:
    unbounded = _ratio(1.2, 0.0, math.inf)  # Fieller's [0, inf) when A's mean is not clearly above 0
    r = ratio_of_ratios(_ratio(2.0, 1.8, 2.2), unbounded)
    assert r.low == 0.0 and r.high == math.inf and r.estimate == pytest.approx(2.0 / 1.2)
    r = ratio_of_ratios(unbounded, _ratio(2.0, 1.8, 2.2))
    assert r.low == 0.0 and r.high == math.inf


def test_ratio_of_ratios_covers_at_its_level() -> None:
    """Two independent comparisons with exact normal intervals of their log ratios: the combined interval
    of log X/Y is the exact one of a difference, so it covers the true X/Y at the intervals' level, where
    adding the two half-widths (no quadrature) would cover far more often and a single one far less."""
    rng = np.random.default_rng(7)
    z = 1.959964  # 95%
    true_x, true_y, sx, sy = math.log(1.3), math.log(0.9), 0.05, 0.08
    draws = 4000
    covered = 0
    for ex, ey in zip(rng.normal(true_x, sx, draws), rng.normal(true_y, sy, draws), strict=True):
        x = RatioResult(math.exp(ex), math.exp(ex - z * sx), math.exp(ex + z * sx), 0.95, 10, "t")
        y = RatioResult(math.exp(ey), math.exp(ey - z * sy), math.exp(ey + z * sy), 0.95, 10, "t")
        r = ratio_of_ratios(x, y)
        covered += r.low <= math.exp(true_x - true_y) <= r.high
    # binomial SD of the coverage at 95% over 4000 draws: 0.0034
    assert abs(covered / draws - 0.95) < 0.012, covered / draws
