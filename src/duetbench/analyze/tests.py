"""Hypothesis tests of A against B.

Named `tests.py` as the design asks; pytest does not collect it (its default patterns are
`test_*.py` and `*_test.py`), and the project's own tests live in the top-level `tests/`.
"""
from __future__ import annotations

from dataclasses import dataclass

from numpy.typing import ArrayLike

from ._inputs import as_sample


@dataclass(frozen=True)
class UTestResult:
    """Mann–Whitney U statistic (of A, scipy's convention) and its two-sided p-value."""

    statistic: float
    pvalue: float


def mann_whitney_u(a: ArrayLike, b: ArrayLike) -> UTestResult:
    """Two-sided Mann–Whitney U test of A's times against B's — Drozdík 2023 (seed 004) §4.3.3.

    Computed by `scipy.stats.mannwhitneyu(a, b, alternative="two-sided")` (exact for small
    samples without ties, normal approximation with tie correction otherwise). It treats every
    observation as independent and ignores pairing and runs, which is why the thesis found it
    too eager on A/A data; we report it beside the CI, never instead of it.
    """
    from scipy.stats import mannwhitneyu  # deferred: importing scipy.stats costs ~0.3 s

    x = as_sample(a, "a")
    y = as_sample(b, "b")
    res = mannwhitneyu(x, y, alternative="two-sided")
    return UTestResult(statistic=float(res.statistic), pvalue=float(res.pvalue))
