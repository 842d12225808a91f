"""When a comparison watched pair by pair may stop, without the stopping bending its interval.

Two reasons to stop, each with the interval that stays true under it:

- **precision**: the t interval is narrower than the target. The decision looks only at the spread,
  never at the estimate; for normal data the mean is independent of every earlier sample variance
  (Helmert's orthogonal contrasts), so the only bias is that of stopping when the spread happens to
  be low (Chow & Robbins 1965, Ann. Math. Statist. 36(2), analyse this rule). Simulated, it took a
  nominal 1 % interval to 1.0–1.75 % false alarms at the n where it stops (10–35 pairs); so the
  interval it judges and reports is made at level 1 − α/2 ("t-stopped", ≤ 0.8 %), at the price of
  ~20 % more pairs.
- **evidence**: the anytime-valid confidence sequence (`interval.confidence_sequence`, Lai 1976)
  at level 1 − α/2 excludes "no difference". Looking after every pair is what a confidence
  sequence allows (Howard et al. 2021 review the idea); the comparison then reports that
  sequence at level 1 − α, which also excludes 1 and stays valid at this data-chosen n. The
  α/2 keeps the total A/A false alarms of both rules together at most about α.

Stopping the first time a fixed-n interval looks significant is *not* allowed: that inflates false
alarms without bound (Armitage, McPherson & Rowe 1969).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ._inputs import FloatArray
from .comparison import ComparisonResult, anytime_units, compare
from .interval import PRIOR_PRECISION, confidence_sequence
from .looks import EVIDENCE_MIN_UNITS


@dataclass(frozen=True)
class MonitorDecision:
    """Whether to stop now; `reason` "precision", "evidence" or "" (go on); `detail` says it in words."""

    stop: bool
    reason: str
    detail: str


def evident(log_units: FloatArray, confidence_level: float) -> bool:
    """True when the confidence sequence at level 1 − α/2 excludes 0 (no difference on the log scale)."""
    if log_units.size < EVIDENCE_MIN_UNITS:
        return False
    alpha = 1.0 - confidence_level
    cs = confidence_sequence(log_units, 1.0 - alpha / 2.0, PRIOR_PRECISION)
    return bool(cs.low > 0.0 or cs.high < 0.0)


def monitor(n: int, relative_ci_width: float, log_units: FloatArray | None, *, min_units: int,
            target_rciw: float, confidence_level: float) -> MonitorDecision:
    """Decide after each unit: stop for precision once `n ≥ min_units` and the fixed-n interval's
    relative width is at most `target_rciw`; stop for evidence once `log_units` (the per-unit log
    ratios the confidence sequence is over; None: not available for this method) make a difference
    evident. Budget and maximum counts are the caller's: they do not look at the data."""
    if log_units is not None and evident(log_units, confidence_level):
        return MonitorDecision(True, "evidence", f"a difference is evident after {n} units "
                               f"(anytime-valid {confidence_level * 100:g}% confidence sequence)")
    if n >= min_units and math.isfinite(relative_ci_width) and relative_ci_width <= target_rciw:
        return MonitorDecision(True, "precision", f"CI width {relative_ci_width:.2%} ≤ target {target_rciw:.2%}")
    return MonitorDecision(False, "", "")


def watch(method: str, a: ArrayLike, b: ArrayLike, *, min_units: int, target_rciw: float, confidence_level: float,
          evidence: bool = True, robust: bool = True, interval: str = "t", min_overlap_rate: float = 0.4,
          stamps: Mapping[str, ArrayLike | None] | None = None, n_resamples: int = 2000
          ) -> tuple[MonitorDecision, ComparisonResult | None]:
    """The decision `duet compare` makes after each run (pair) of an adaptive comparison, from the values
    measured so far: the live comparison (fixed-n interval) and `monitor`. The CLI and the simulations
    that prove its error rates (`analyze.honesty`) both call this, so what is proven is what runs.
    Budget and count limits are the caller's. The async duet has no evidence rule (`anytime_units`).
    `n_resamples` matters only for interval="bootstrap": a live estimate needs fewer replicates. The live
    comparison has neither the U test nor the sides' summaries (`compare`'s u_test and summaries): nothing
    here or in the progress line reads them."""
    n_a, n_b = np.size(a), np.size(b)
    n = min(n_a, n_b)
    if n < 3:
        return MonitorDecision(False, "", ""), None
    st = stamps or {}
    try:
        live = compare(method, a, b, confidence_level=confidence_level, n_resamples=n_resamples, random_state=0,
                       robust=robust, u_test=False, summaries=False, interval=interval,
                       min_overlap_rate=min_overlap_rate,
                       a_start=st.get("a_start"), a_end=st.get("a_end"), b_start=st.get("b_start"),
                       b_end=st.get("b_end"))
    except ValueError:
        return MonitorDecision(False, "", ""), None
    units = anytime_units(method, a, b) if evidence and method != "aduet" else None
    return monitor(n, live.relative_ci_width, units,
                   min_units=min_units, target_rciw=target_rciw, confidence_level=confidence_level), live
