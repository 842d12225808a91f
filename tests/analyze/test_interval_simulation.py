"""99 % means 99 %: the intervals and stopping rules, simulated with known truth the way the CLI applies
them (robust filter on, `monitor.watch` after every run), at the sample sizes where they are used.

A cell passes when its miss rate is at most 2 % (the project's bar for a nominal 1 %). With 2000
simulations a true rate of 1 % lies 4.5 standard errors below the bar and one of 3 % 2.6 above it; the
seeds are fixed, so a cell's result is the same on every run. The whole grid, with more simulations
per cell and Wilson bounds, is `bench/honesty.py`.
"""
from __future__ import annotations

import numpy as np
import pytest

from duetbench.analyze import honesty
from duetbench.analyze.comparison import compare
from duetbench.analyze.interval import (
    confidence_sequence,
    fieller_ratio,
    hac_t,
    mixture_t_boundary,
    student_t,
    welch_difference,
    yuen,
)

BAR = 0.02


@pytest.mark.parametrize("noise", honesty.NOISES)
@pytest.mark.parametrize("n", [5, 10, 20])
@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
def test_fixed_n_aa_false_alarms(method: str, n: int, noise: str) -> None:
    r = honesty.fixed_n(method, n, noise=noise, sims=2000, seed=1000 + n)
    assert r.rate <= BAR, f"{method} n={n} {noise}: {r.misses}/{r.sims} false alarms"


@pytest.mark.parametrize("method", ["duet", "sequential", "aduet"])
def test_fixed_n_covers_a_known_slowdown(method: str) -> None:
    r = honesty.fixed_n(method, 5, ratio=1.05, noise="skewed", sims=2000, seed=3)
    assert r.rate <= BAR


def test_the_percentile_bootstrap_is_what_failed() -> None:
    # The reason for the t family: the same cell with the papers' percentile bootstrap misses far too
    # often (issue 13 measured 10.5 % at 5 pairs); this test fails if the simulation could not tell.
    r = honesty.fixed_n("duet", 5, noise="normal", sims=2000, seed=5, interval="bootstrap")
    assert r.rate > 0.05


@pytest.mark.parametrize(("estimator", "runs"), [("run-means", 3), ("run-means", 5), ("hierarchical", 5)])
@pytest.mark.parametrize("method", ["duet", "sequential"])
def test_campaign_estimators_aa(method: str, estimator: str, runs: int) -> None:
    r = honesty.campaign(method, estimator, runs, 10, sims=2000, seed=runs)
    assert r.rate <= BAR, f"{method} {estimator} runs={runs}: {r.misses}/{r.sims}"


@pytest.mark.parametrize(("method", "sigma", "noise"), [
    ("duet", 0.005, "normal"),   # stops on precision at ~17 pairs
    ("duet", 0.005, "outliers"),  # the robust filter at work while stopping
])
def test_adaptive_stop_keeps_its_level(method: str, sigma: float, noise: str) -> None:
    r = honesty.adaptive(method, sigma=sigma, noise=noise, sims=2000, seed=11, max_units=60)
    assert r.rate <= BAR, f"{r.misses}/{r.sims} false alarms, median stop {r.median_n}"


@pytest.mark.parametrize("noise", ["normal", "outliers"])
def test_adaptive_stop_keeps_its_level_at_the_counts_the_cli_looks_at(noise: str) -> None:
    # Past 20 runs the CLI looks only as the runs grow by 5 % (analyze/looks.py); this noise stops at
    # ~44 pairs, where the schedule skips every other count.
    r = honesty.adaptive("duet", sigma=0.008, noise=noise, sims=2000, seed=21, max_units=150, looks="schedule")
    assert 25 <= r.median_n <= 100
    assert r.rate <= BAR, f"{r.misses}/{r.sims} false alarms, median stop {r.median_n}"


def test_evidence_stop_is_fast_and_covers() -> None:
    # An evident difference: a 50 % slowdown amid 20 % noise stops within 14 pairs (the evidence rule
    # waits for 10, monitor.EVIDENCE_MIN_UNITS), and the anytime-valid interval it reports still covers.
    r = honesty.adaptive("duet", ratio=1.5, sigma=0.2, sims=2000, seed=12, max_units=60)
    assert r.median_n <= 14 and r.rate <= BAR
    s = honesty.adaptive("sequential", ratio=1.2, sigma=0.02, sims=1000, seed=13, max_units=60)
    assert s.median_n <= 14 and s.upper() <= BAR


# --- the formulas themselves ----------------------------------------------------------------------

def test_student_t_matches_scipy() -> None:
    from scipy import stats

    x = np.array([1.0, 2.0, 4.0, 3.5, 2.2])
    iv = student_t(x, 0.99)
    lo, hi = stats.t.interval(0.99, 4, loc=x.mean(), scale=stats.sem(x))
    assert (iv.low, iv.high, iv.df) == pytest.approx((lo, hi, 4.0))


def test_yuen_without_removals_is_student_and_widens_with_them() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, 30)
    assert yuen(x, np.ones(30, dtype=bool), 0.99) == student_t(x, 0.99)
    x[3] = 25.0
    keep = np.ones(30, dtype=bool)
    keep[3] = False
    iv = yuen(x, keep, 0.99)
    keep[np.argmin(x)] = False  # the trim is symmetric: the lowest value goes too
    naive = student_t(x[keep], 0.99)
    assert iv.estimate == pytest.approx(naive.estimate) and iv.df == 27
    assert iv.high - iv.low > naive.high - naive.low


def test_welch_matches_scipy() -> None:
    from scipy import stats

    a = np.array([10.0, 11.0, 10.5, 10.2, 10.9, 10.1])
    b = np.array([12.0, 11.0, 13.5, 12.2])
    iv = welch_difference(a, b, 0.95)
    ref = stats.ttest_ind(b, a, equal_var=False).confidence_interval(0.95)
    assert (iv.low, iv.high) == pytest.approx((ref.low, ref.high))


def test_fieller_bounds_solve_the_defining_equation() -> None:
    from duetbench.analyze.interval import t_quantile

    a = np.array([10.0, 11.0, 10.5, 10.2, 10.9, 10.1])
    b = np.array([12.0, 11.0, 13.5, 12.2, 12.5])
    iv = fieller_ratio(a, b, 0.99)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    t2 = t_quantile(0.99, iv.df) ** 2
    for theta in (iv.low, iv.high):
        assert (b.mean() - theta * a.mean()) ** 2 == pytest.approx(t2 * (vb + theta**2 * va))
    assert iv.low < b.mean() / a.mean() < iv.high


def test_hac_counts_the_shared_neighbours() -> None:
    # A 1-dependent series (moving sums of two): its mean's variance is 3/2 of the plain estimate's.
    rng = np.random.default_rng(1)
    e = rng.normal(0, 1, 20_001)
    x = e[1:] + e[:-1]
    plain = student_t(x, 0.99)
    hac = hac_t(x, 0.99)
    assert (hac.se / plain.se) ** 2 == pytest.approx(2.0, rel=0.1)


def test_confidence_sequence_is_anytime_valid() -> None:
    # Ville's inequality: under the truth the sequence excludes it at some n ≤ 200 at most α of the time.
    rng = np.random.default_rng(2)
    x = rng.standard_normal((4000, 200))
    n = np.arange(1, 201)
    mean = np.cumsum(x, 1) / n
    sd = np.sqrt(np.maximum(np.cumsum(x * x, 1) - n * mean**2, 0) / np.maximum(n - 1, 1))
    bound = np.array([mixture_t_boundary(k, 0.99) for k in n])
    finite = np.isfinite(bound)
    ever = (np.abs(mean[:, finite]) > bound[finite] * sd[:, finite]).any(axis=1).mean()
    assert ever <= 0.01 + 2.576 * np.sqrt(0.01 * 0.99 / 4000)
    assert mixture_t_boundary(4, 0.99) == np.inf or mixture_t_boundary(5, 0.99) < np.inf
    iv = confidence_sequence(x[0, :50], 0.99)
    assert iv.high - iv.low > student_t(x[0, :50], 0.99).high - student_t(x[0, :50], 0.99).low


def test_anytime_interval_in_compare() -> None:
    rng = np.random.default_rng(3)
    a = rng.lognormal(0, 0.01, 20)
    b = 1.1 * rng.lognormal(0, 0.01, 20)
    r = compare("duet", a, b, interval="anytime")
    assert r.ratio.interval == "anytime" and r.ratio.low < 1.1 < r.ratio.high
    assert any("anytime-valid" in n for n in r.notes)
    with pytest.raises(ValueError, match="independent units"):
        compare("aduet", a, b, interval="anytime", a_start=np.arange(20), a_end=np.arange(20) + 1,
                b_start=np.arange(20), b_end=np.arange(20) + 1)
