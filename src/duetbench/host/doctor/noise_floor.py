"""Pure arithmetic behind ``duet calibrate``: noise of one workload, and what a CI width means for resolution.

No I/O here; ``calibrate_cli`` measures and calls these.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def relative_std(values: Sequence[float]) -> float:
    """Sample standard deviation over the mean (ddof = 1): EMP's measure of PT/ET variation
    (Suh et al., Suh et al. (EMP), §4.1 Tables II–III report std and mean; this is their ratio). nan below 2 values."""
    x = np.asarray(values, dtype=float)
    if x.size < 2 or not np.all(np.isfinite(x)) or x.mean() <= 0:
        return float("nan")
    return float(x.std(ddof=1) / x.mean())


def ci_half_width(low: float, high: float, estimate: float) -> float:
    """Half the CI width relative to the estimate: the smallest relative difference that would move the CI
    of an A/A ratio off 1 (docs/methods.md: the verdict is "no difference" while the CI contains 1)."""
    if not (estimate > 0 and high >= low):
        raise ValueError(f"need estimate > 0 and high >= low, got {estimate}, [{low}, {high}]")
    return (high - low) / 2.0 / estimate


def time_to_resolve(half_width: float, machine_s: float, target: float = 0.01) -> float:
    """Machine seconds for the CI half-width to reach ``target``, assuming it shrinks as 1/sqrt(n) (the
    central-limit rate of a bootstrap CI of a mean, Efron & Tibshirani 1993, ch. 5) and machine time grows
    linearly with n. 0 when already narrower; inf without a measurement."""
    if not (half_width >= 0 and machine_s > 0 and target > 0) or math.isnan(half_width):
        return float("inf")
    if half_width <= target:
        return 0.0
    return machine_s * (half_width / target) ** 2


def runs_to_resolve(half_width: float, runs: int, target: float = 0.01) -> int | None:
    """Runs (pairs) for the half-width to reach ``target`` by the same 1/sqrt(n) rule; at least ``runs``
    when already narrower is not claimed — the answer is then the runs measured. None for an unbounded
    interval (infinite half-width: a duet whose pairs were all hit on one side), from which no count follows."""
    if runs < 1 or not half_width >= 0:
        raise ValueError("need runs >= 1 and a half-width >= 0")
    if math.isinf(half_width):
        return None
    if half_width <= target:
        return runs
    return math.ceil(runs * (half_width / target) ** 2)


def best_method(times: dict[str, float]) -> str | None:
    """The method whose median time-to-resolve is smallest; None if none can resolve in finite time."""
    finite = {m: t for m, t in times.items() if math.isfinite(t)}
    return min(finite, key=lambda m: finite[m]) if finite else None
