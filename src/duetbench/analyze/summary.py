"""Descriptive statistics of one sample and the relative CI width used to compare methods."""
from __future__ import annotations

import math

import msgspec
from numpy.typing import ArrayLike

from ._inputs import as_sample
from .quantile import percentiles


class Summary(msgspec.Struct, frozen=True):
    """Descriptive statistics of one sample (quartiles by linear interpolation, numpy's default)."""

    n: int
    mean: float
    median: float
    stdev: float
    min: float
    max: float
    q1: float
    q3: float
    cv: float


def describe(x: ArrayLike) -> Summary:
    """Summarize a sample; `cv` = stdev/mean with the sample stdev (ddof=1).

    The coefficient of variation is the figure of merit of Drozdík 2023 §4.3.1.
    With fewer than two values the stdev (and so cv) is nan rather than a misleading 0.
    """
    arr = as_sample(x, "sample")
    n = int(arr.size)
    mean = float(arr.mean())
    stdev = float(arr.std(ddof=1)) if n >= 2 else math.nan
    q1, median, q3 = percentiles(arr, (25.0, 50.0, 75.0))
    cv = _cv(mean, stdev)
    return Summary(
        n=n, mean=mean, median=median, stdev=stdev, min=float(arr.min()), max=float(arr.max()), q1=q1, q3=q3, cv=cv
    )


def coefficient_of_variation(x: ArrayLike) -> float:
    """stdev/mean with the sample stdev (ddof=1), as `describe(x).cv` gives it, without the quartiles (the
    percentile is most of `describe`'s cost, and a live look after every pair needs only this)."""
    arr = as_sample(x, "sample")
    return _cv(float(arr.mean()), float(arr.std(ddof=1)) if arr.size >= 2 else math.nan)


def _cv(mean: float, stdev: float) -> float:
    return stdev / mean if mean != 0 else math.nan


def unsummarized(n: int) -> Summary:
    """A sample's Summary when only its size is known: every statistic nan (a live comparison's, which
    skips describing the sides, `comparison.compare(summaries=False)`)."""
    nan = math.nan
    return Summary(n=n, mean=nan, median=nan, stdev=nan, min=nan, max=nan, q1=nan, q3=nan, cv=nan)


def relative_ci_width(low: float, high: float, estimate: float) -> float:
    """(high − low) / estimate: the accuracy measure of Bulej et al. 2020 §4.1.

    For a ratio CI the estimate is near 1, so this is the width in "fractions of the baseline";
    Drozdík 2023 eq. 4.2 uses the same quantity for difference CIs divided by the mean.
    """
    if high == math.inf and math.isfinite(low) and math.isfinite(estimate):
        return math.inf  # an unbounded interval (Fieller's, with an uncertain denominator)
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(estimate)):
        raise ValueError(f"relative CI width needs finite numbers, got low={low}, high={high}, estimate={estimate}")
    if estimate == 0:
        raise ValueError("relative CI width is undefined for an estimate of 0")
    if high < low:
        raise ValueError(f"CI bounds are reversed: low={low} > high={high}")
    return (high - low) / abs(estimate)
