"""One command on its own (`duet compare CMD`): its mean with a t interval, its spread, and how finely a
comparison of it with itself could resolve a difference. Sources: docs/methods.md, "One command"."""
from __future__ import annotations

import math

import msgspec
import numpy as np
from numpy.typing import ArrayLike

from ._inputs import as_sample
from .interval import student_t, t_quantile
from .summary import describe


class Benchmark(msgspec.Struct, frozen=True):
    """One command's timing runs (seconds). `low`/`high`: the t interval of the mean at `confidence`;
    `aa_resolution`: half-width, as a fraction, of the ratio CI an A/A comparison of this command with
    itself would have after as many runs per side (nan below two runs)."""

    metric: str
    runs: int
    mean: float
    stdev: float
    median: float
    min: float
    max: float
    cv: float
    low: float
    high: float
    confidence: float
    user: float
    system: float
    aa_resolution: float

    @property
    def relative_ci_width(self) -> float:
        return (self.high - self.low) / self.mean if self.mean > 0 else math.nan

    @property
    def relative_half_width(self) -> float:
        """The t interval's half-width as a fraction of the mean (the "±" printed beside it): from the upper
        end, which is never cut at zero, so that mean ± it gives the high end shown."""
        return (self.high - self.mean) / self.mean if self.mean > 0 else math.nan


def mean_interval(x: ArrayLike, confidence_level: float) -> tuple[float, float, float]:
    """(mean, low, high): Student's t interval of the mean [Student 1908], as analyze.interval.student_t;
    with fewer than two values the bounds are nan (no spread is known)."""
    arr = as_sample(x, "runs")
    if arr.size < 2:
        return float(arr.mean()), math.nan, math.nan
    iv = student_t(arr, confidence_level)
    return iv.estimate, iv.low, iv.high


def aa_resolution(cv: float, runs: int, confidence_level: float) -> float:
    """Half-width (a fraction of 1) of the CI of B/A that a sequential comparison of two commands with
    this coefficient of variation and `runs` runs each would get: t_{2n−2} · CV · √(2/n).

    The delta method for the ratio of two independent means with equal CV (the log ratio's standard
    error is CV·√(2/n)); the degrees of freedom are Welch's [Welch 1947] for equal variances and sizes.
    Fieller's interval [Fieller 1954], which duet compare reports, agrees with it to first order. Our own
    summary of "this command's noise as a comparison would see it" (docs/methods.md, One command)."""
    if runs < 2 or not math.isfinite(cv):
        return math.nan
    return t_quantile(confidence_level, 2 * runs - 2) * cv * math.sqrt(2.0 / runs)


def summarize(metric: str, times: ArrayLike, user: ArrayLike, system: ArrayLike,
              confidence_level: float) -> Benchmark:
    """The Benchmark of one command's runs (times in seconds, per run; user and system CPU per run)."""
    s = describe(times)
    mean, low, high = mean_interval(times, confidence_level)
    # A time's mean is positive: a t interval that reaches below zero (two or three noisy runs) is cut at
    # zero, which keeps its coverage and never prints a negative time.
    low = max(low, 0.0) if math.isfinite(low) else low
    return Benchmark(metric=metric, runs=s.n, mean=mean, stdev=s.stdev, median=s.median, min=s.min, max=s.max,
                     cv=s.cv, low=low, high=high, confidence=confidence_level,
                     user=float(np.mean(as_sample(user, "user"))), system=float(np.mean(as_sample(system, "system"))),
                     aa_resolution=aa_resolution(s.cv, s.n, confidence_level))


def precise_enough(times: ArrayLike, target_rciw: float, confidence_level: float) -> bool:
    """The adaptive stop of one command: its mean's t interval, made at α/2 to pay for the look at the
    spread [Chow 1965], as the comparison's precision stop (analyze/monitor.py), is at most `target_rciw`
    of the mean wide."""
    arr = as_sample(times, "runs")
    if arr.size < 2:
        return False
    _, low, high = mean_interval(arr, 1 - (1 - confidence_level) / 2)
    mean = float(arr.mean())
    return mean > 0 and (high - low) / mean <= target_rciw
