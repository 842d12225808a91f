"""mann_whitney_u() is scipy's two-sided test (our own code, checked against scipy), with our input checks."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import mannwhitneyu

from duetbench.analyze.tests import mann_whitney_u


@pytest.mark.parametrize("n", [5, 40])
def test_identity_with_scipy(n: int) -> None:
    rng = np.random.default_rng(n)
    a, b = rng.lognormal(0, 0.1, n), rng.lognormal(0.05, 0.1, n + 3)
    ours = mann_whitney_u(a, b)
    ref = mannwhitneyu(a, b, alternative="two-sided")
    assert ours.statistic == ref.statistic
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-12)


def test_agrees_with_scipy_exact_ties_and_asymptotic() -> None:
    """Random sizes 1..30 (exact branch when one side has <= 8 values and no ties), tied integer data
    (normal approximation with tie correction), and shifted lognormal data."""
    rng = np.random.default_rng(2026)
    for _ in range(400):
        n1, n2 = (int(k) for k in rng.integers(1, 31, size=2))
        if rng.random() < 0.3:
            a, b = rng.integers(0, 5, n1).astype(float), rng.integers(0, 5, n2).astype(float)
        else:
            a, b = rng.lognormal(0, 0.1, n1), rng.lognormal(float(rng.choice([0.0, 0.05, 0.2])), 0.1, n2)
        ours, ref = mann_whitney_u(a, b), mannwhitneyu(a, b, alternative="two-sided")
        assert ours.statistic == ref.statistic
        assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-10, abs=1e-300), (n1, n2)


def test_clear_separation_and_identical_samples() -> None:
    assert mann_whitney_u(np.arange(1.0, 21.0), np.arange(101.0, 121.0)).pvalue < 1e-6
    same = np.arange(1.0, 21.0)
    assert mann_whitney_u(same, same).pvalue == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [[], [1.0, float("inf")]])
def test_rejects_bad_input(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        mann_whitney_u(bad, [1.0, 2.0])
