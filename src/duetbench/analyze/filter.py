"""Data filtering before estimation: warm-up removal and per-run winsorization."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ._inputs import FloatArray, as_sample


def winsorize_run(x: ArrayLike, *, threshold: float = 0.2) -> FloatArray:
    """Winsorize one run: Bulej et al. 2020 §4 and appendix §7.1.

    "Replacing at most one observation in a run with its nearest neighbor when that observation
    is further than 20% away from the min-max range of the remaining observations." Only the
    run's minimum or maximum can qualify. The maximum is replaced by the largest remaining value
    when it exceeds max(rest) + threshold·(max(rest) − min(rest)), strictly; the minimum
    symmetrically. If both qualify, the one lying further beyond, measured in units of its
    remaining range, is replaced (the paper does not say; this picks the grosser outlier).
    Runs of fewer than 3 observations are returned unchanged: with one remaining value the
    range is 0 and any other value would count as an outlier. Returns a new array.
    """
    if not threshold >= 0:
        raise ValueError(f"threshold must be >= 0, got {threshold}")
    run = as_sample(x, "run").copy()
    n = run.size
    if n < 3:
        return run
    order = np.argsort(run, kind="stable")
    lo, lo2, hi2, hi = order[0], order[1], order[-2], order[-1]
    # Rest without the max spans [run[lo], run[hi2]]; rest without the min spans [run[lo2], run[hi]].
    span_hi = run[hi2] - run[lo]
    span_lo = run[hi] - run[lo2]
    beyond_hi = run[hi] - run[hi2]
    beyond_lo = run[lo2] - run[lo]
    hi_out = beyond_hi > threshold * span_hi
    lo_out = beyond_lo > threshold * span_lo
    if hi_out and lo_out:
        # Compare beyond/span without dividing, since a span can be 0.
        if beyond_hi * span_lo >= beyond_lo * span_hi:
            lo_out = False
        else:
            hi_out = False
    if hi_out:
        run[hi] = run[hi2]
    elif lo_out:
        run[lo] = run[lo2]
    return run


def winsorize_runs(runs: Sequence[ArrayLike], *, threshold: float = 0.2) -> list[FloatArray]:
    """Apply `winsorize_run` to every run separately — Bulej et al. 2020 §4.

    `runs` is a sequence of per-run arrays (or a 2-D array, rows = runs). Returns new arrays.
    """
    if isinstance(runs, np.ndarray) and runs.ndim == 1:
        raise ValueError("winsorize_runs expects a sequence of per-run arrays; use winsorize_run for a single run")
    return [winsorize_run(r, threshold=threshold) for r in runs]


def discard_warmup(x: ArrayLike, count_or_fraction: int | float) -> FloatArray:
    """Drop the first iterations of a run as warm-up.

    An int drops that many; a float in [0, 1) drops floor(fraction · n) (0.5 reproduces the
    "first half of iterations" of Bulej et al. 2020 §4 and Drozdík 2023
    §4.2). Raises when nothing would remain.
    """
    run = as_sample(x, "run")
    if isinstance(count_or_fraction, (bool, np.bool_)):
        raise ValueError("count_or_fraction must be an int count or a float fraction, not a bool")
    if isinstance(count_or_fraction, (int, np.integer)):
        count = int(count_or_fraction)
        if count < 0:
            raise ValueError(f"warm-up count must be >= 0, got {count}")
    else:
        fraction = float(count_or_fraction)
        if not 0.0 <= fraction < 1.0:
            raise ValueError(f"warm-up fraction must lie in [0, 1), got {count_or_fraction}; "
                             "pass an int to drop a count")
        count = math.floor(fraction * run.size)
    if count >= run.size:
        raise ValueError(f"discarding {count} warm-up iterations leaves nothing of a run of {run.size}")
    return run[count:].copy()
