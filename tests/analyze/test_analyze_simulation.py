"""Seeded simulations with known truth: CI coverage, A/A false positives, power, robustness.

Tolerances come from binomial standard errors of the simulated proportions plus the known
small-sample shortfall of percentile intervals: for a mean of n units the percentile bootstrap
uses the plug-in variance and normal-like quantiles, so its coverage is about
P(|T_{n−1}| < z·sqrt((n−1)/n)) — 93.9% for nominal 95% at n = 40, and a false-positive rate of
about 1.7% for nominal 1% at n = 30. Each test names its numbers. Bootstraps use 2000
replicates to stay fast; their Monte Carlo error is part of what the tolerances absorb.
"""
from __future__ import annotations

import math

import numpy as np

from duetbench.analyze.comparison import compare
from duetbench.analyze.ratio import difference_of_means_ci, duet_ratio_ci, ratio_of_means_ci
from duetbench.analyze.verdicts import verdict

B = 2000


def binomial_se(p: float, n: int) -> float:
    return math.sqrt(p * (1.0 - p) / n)


def duet_experiment(
    rng: np.random.Generator, ratio: float, runs: int, iterations: int, noise: float = 0.01
) -> tuple[np.ndarray, np.ndarray]:
    """Duet times (runs × iterations): a per-run random effect (sd 10%) and per-iteration
    interference (sd 3%) shared by A and B, plus `noise` of each side's own. Lognormal, so the
    true geometric-mean ratio B/A is exactly `ratio`."""
    run_effect = rng.normal(0.0, 0.10, (runs, 1))
    shared = run_effect + rng.normal(0.0, 0.03, (runs, iterations))
    a = np.exp(shared + rng.normal(0.0, noise, (runs, iterations)))
    b = ratio * np.exp(shared + rng.normal(0.0, noise, (runs, iterations)))
    return a, b


def duet_coverage(sims: int, level: float, ratio: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(sims):
        a, b = duet_experiment(rng, ratio, runs=40, iterations=5)
        r = duet_ratio_ci(a, b, confidence_level=level, n_resamples=B, random_state=rng)
        hits += r.low <= ratio <= r.high
    return hits / sims


def duet_false_positive_rate(sims: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    alarms = 0
    for _ in range(sims):
        a, b = duet_experiment(rng, 1.0, runs=30, iterations=1)
        r = duet_ratio_ci(a.ravel(), b.ravel(), confidence_level=0.99, n_resamples=B, random_state=rng)
        alarms += verdict(r.low, r.high) != "no difference"
    return alarms / sims


def duet_power(sims: int, ratio: float, seed: int) -> float:
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(sims):
        a, b = duet_experiment(rng, ratio, runs=30, iterations=1)
        r = compare("duet", a.ravel(), b.ravel(), n_resamples=B, random_state=rng)
        found += r.verdict == "slower"
    return found / sims


def sequential_experiment(rng: np.random.Generator, ratio: float, runs: int, iterations: int) -> tuple[list, list]:
    """Independent A and B runs: each run its own random effect (sd 5%), iterations 2% noise.
    A scale family, so the true ratio of expected means is exactly `ratio`."""
    def side(scale: float) -> list[np.ndarray]:
        effect = rng.normal(0.0, 0.05, (runs, 1))
        return list(scale * np.exp(effect + rng.normal(0.0, 0.02, (runs, iterations))))

    return side(1.0), side(ratio)


def sequential_coverage(sims: int, level: float, ratio: float, seed: int) -> tuple[float, float]:
    """Coverage of ratio_of_means_ci (hierarchical) and difference_of_means_ci (run means)."""
    rng = np.random.default_rng(seed)
    # E[a] for exp(N(0, .05²) + N(0, .02²)); the difference of expected means is (ratio − 1)·E[a].
    true_diff = (ratio - 1.0) * math.exp((0.05**2 + 0.02**2) / 2.0)
    ratio_hits = diff_hits = 0
    for _ in range(sims):
        a, b = sequential_experiment(rng, ratio, runs=40, iterations=5)
        r = ratio_of_means_ci(a, b, confidence_level=level, n_resamples=B, random_state=rng)
        d = difference_of_means_ci(a, b, confidence_level=level, n_resamples=B, random_state=rng)
        ratio_hits += r.low <= ratio <= r.high
        diff_hits += d.low <= true_diff <= d.high
    return ratio_hits / sims, diff_hits / sims


def robust_study(sims: int, seed: int) -> tuple[float, float, float]:
    """40 pairs with 1% noise per side, 10% of them hit on B's side only by +12%; truth 1.02.
    Returns coverage with the filter, coverage without, median width ratio (without/with)."""
    rng = np.random.default_rng(seed)
    truth = 1.02
    cover_f = cover_u = 0
    widths = []
    for _ in range(sims):
        a, b = duet_experiment(rng, truth, runs=40, iterations=1)
        a, b = a.ravel(), b.ravel()
        b[rng.choice(40, size=4, replace=False)] *= 1.12
        f = compare("duet", a, b, n_resamples=B, random_state=rng).ratio
        u = compare("duet", a, b, n_resamples=B, random_state=rng, robust=False).ratio
        cover_f += f.low <= truth <= f.high
        cover_u += u.low <= truth <= u.high
        widths.append((u.high - u.low) / (f.high - f.low))
    return cover_f / sims, cover_u / sims, float(np.median(widths))


def test_duet_coverage_near_nominal() -> None:
    # 400 experiments of 40 runs × 5 iterations at 95%: expected ≈ 93.9% (see module doc),
    # binomial SE ≈ 1.2%; the brief's window 95% ± 4% holds that with > 2 SE to spare.
    coverage = duet_coverage(400, 0.95, 1.03, seed=100)
    assert abs(coverage - 0.95) <= 0.04, coverage


def test_duet_aa_false_positive_rate() -> None:
    # 1000 A/A experiments of 30 pairs at 99%: α = 1%, plus the small-sample excess ≈ 0.7%,
    # plus ≈ 0.3% for the Monte Carlo jitter of 0.5% quantiles from 2000 replicates (5 seeds ×
    # 1000 gave 2.0% on average); 3 binomial SEs at 2% ≈ 1.3%. Bound ≈ 3.3%: a CI that lost
    # its level (say 5% false alarms) fails clearly.
    fpr = duet_false_positive_rate(1000, seed=101)
    assert fpr <= 0.01 + 0.007 + 0.003 + 3 * binomial_se(0.02, 1000), fpr


def test_duet_power_at_five_percent() -> None:
    # Truth 5% slower, 30 pairs, 1% own noise per side: the 99% CI half-width is ≈ 2.6·1.4%/√30
    # ≈ 0.7%, so detection is practically certain; require ≥ 95% of 200.
    power = duet_power(200, 1.05, seed=102)
    assert power >= 0.95, power


def test_sequential_coverage_near_nominal() -> None:
    # 300 experiments, 40 runs × 5 iterations per side, 95%: expected ≈ 94% (the hierarchical
    # bootstrap's extra within-run variance is ~1% of the between-run one here), SE ≈ 1.4%.
    ratio_cov, diff_cov = sequential_coverage(300, 0.95, 1.03, seed=103)
    assert abs(ratio_cov - 0.95) <= 0.04, ratio_cov
    assert abs(diff_cov - 0.95) <= 0.04, diff_cov


def test_robust_filter_keeps_truth_under_one_sided_outliers() -> None:
    # Filtered, 36 clean pairs remain: 99% CI coverage expected ≈ 98%, SE over 100 ≈ 1.4%;
    # require ≥ 94%. Unfiltered, the log-ratio sd grows from 1.4% to ≈ 3.7%: expect the CI
    # ≈ 2.6× wider than a mean of the kept pairs alone would be; Yuen's trim, symmetric since the hog
    # simulations (interval.yuen), gives up a little of that: ≈ 1.9×; require ≥ 1.7× (median over
    # experiments).
    cover_f, cover_u, width_ratio = robust_study(100, seed=104)
    assert cover_f >= 0.94, cover_f
    assert width_ratio >= 1.7, width_ratio


if __name__ == "__main__":  # pragma: no cover - prints the numbers quoted in reports
    print("duet coverage @95%", duet_coverage(400, 0.95, 1.03, seed=100))
    print("duet A/A FPR @99%", duet_false_positive_rate(1000, seed=101))
    print("duet power 5%", duet_power(200, 1.05, seed=102))
    print("duet power 1%", duet_power(200, 1.01, seed=105))
    print("sequential coverage @95% (ratio, diff)", sequential_coverage(300, 0.95, 1.03, seed=103))
    print("robust (cover filtered, cover unfiltered, width ratio)", robust_study(100, seed=104))
