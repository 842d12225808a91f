"""mann_whitney_u() is scipy's two-sided test, with our input checks."""
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
    assert ours.pvalue == ref.pvalue


def test_clear_separation_and_identical_samples() -> None:
    assert mann_whitney_u(np.arange(1.0, 21.0), np.arange(101.0, 121.0)).pvalue < 1e-6
    same = np.arange(1.0, 21.0)
    assert mann_whitney_u(same, same).pvalue == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [[], [1.0, float("inf")]])
def test_rejects_bad_input(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        mann_whitney_u(bad, [1.0, 2.0])
