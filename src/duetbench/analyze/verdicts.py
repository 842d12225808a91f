"""Turning a ratio CI into a verdict and into plain words."""
from __future__ import annotations

import math
from typing import Literal

from .ratio import RatioResult

Verdict = Literal["slower", "faster", "no difference"]


def verdict(low: float, high: float) -> Verdict:
    """Return "slower" if the B/A CI lies entirely above 1, "faster" if entirely below, else
    "no difference".

    The CI test of Bulej et al. 2020 §3 ("when the confidence interval straddles 1.0
    we consider the performance equal") and Drozdík 2023 §4.3.2. A bound exactly at
    1 counts as straddling. An unbounded upper end (Fieller's interval when A's mean is itself
    uncertain: [0, inf)) is allowed; NaN is not.
    """
    if math.isnan(low) or math.isnan(high) or not math.isfinite(low):
        raise ValueError(f"verdict needs a finite lower CI bound and no NaN, got low={low}, high={high}")
    if low > high:
        raise ValueError(f"CI bounds are reversed: low={low} > high={high}")
    if low > 1.0:
        return "slower"
    if high < 1.0:
        return "faster"
    return "no difference"


def _decimals(width_pct: float) -> int:
    # Enough decimals that the CI's width shows at least one significant digit, 1 to 4.
    if width_pct <= 0 or not math.isfinite(width_pct):
        return 1
    return min(4, max(1, 1 - math.floor(math.log10(width_pct))))


def _bound(value: float, decimals: int) -> int:
    # A CI bound next to 0% (B/A next to 1) gets more decimals, up to 4, until its sign shows: "99% CI
    # 0.0%…+2.1%" beside "no difference" hid that the interval holds 1 (its low end was −0.04%).
    while decimals < 4 and value != 0 and float(f"{abs(value):.{decimals}f}") == 0:
        decimals += 1
    return decimals


def _pct(value: float, decimals: int) -> str:
    # Past a million percent, significant digits: a t interval over two very different runs reaches
    # e^500, which fixed-point wrote out in 200 digits.
    return f"{value:.3g}" if abs(value) >= 1e6 else f"{value:.{decimals}f}"


def _signed(value: float, decimals: int) -> str:
    decimals = _bound(value, decimals)
    text = _pct(abs(value), decimals)
    if float(text) == 0:
        return text
    return ("+" if value > 0 else "\u2212") + text


def describe_change(ratio: RatioResult, name_a: str = "A", name_b: str = "B") -> str:
    """Plain-words summary of a B/A ratio CI. Our own wording (no paper prescribes one).

    "B is 4.8% slower (99% CI 4.1%–5.5%)"; "B is 2.1% faster (99% CI 1.5%–2.7%)", where
    "x% faster" means B takes x% less time (1 − ratio); "no difference between A and B
    detected (B/A = 1.003, 99% CI −0.4%…+1.0%)".
    """
    v = verdict(ratio.low, ratio.high)
    level = f"{ratio.confidence_level * 100:g}%"
    d = _decimals((ratio.high - ratio.low) * 100)
    if v == "slower":
        pct, lo, hi = ((x - 1.0) * 100 for x in (ratio.estimate, ratio.low, ratio.high))
        dl = _bound(lo, d)
        if math.isinf(hi):  # Fieller's interval when A's mean is itself uncertain: no upper end
            return f"{name_b} is {_pct(pct, d)}% slower ({level} CI {_pct(lo, dl)}% or more, no upper bound)"
        return f"{name_b} is {_pct(pct, d)}% slower ({level} CI {_pct(lo, dl)}%\u2013{_pct(hi, d)}%)"
    if v == "faster":
        pct, lo, hi = ((1.0 - x) * 100 for x in (ratio.estimate, ratio.high, ratio.low))
        return f"{name_b} is {pct:.{d}f}% faster ({level} CI {lo:.{_bound(lo, d)}f}%\u2013{hi:.{d}f}%)"
    lo, hi = ((x - 1.0) * 100 for x in (ratio.low, ratio.high))
    if math.isinf(hi):
        # "−100.0%…+inf%" read as numbers; it says that these runs bound the ratio on neither side (or one)
        interval = (f"{level} CI unbounded" if ratio.low <= 0
                    else f"{level} CI {_signed(lo, d)}% or more, no upper bound")
    else:
        interval = f"{level} CI {_signed(lo, d)}%\u2026{_signed(hi, d)}%"
    return (f"no difference between {name_a} and {name_b} detected "
            f"({name_b}/{name_a} = {ratio.estimate:.{max(3, d + 2)}f}, {interval})")


def exceeds_threshold(ratio: RatioResult, pct: float) -> bool:
    """True when the whole CI lies above 1 + pct/100: B is slower by more than `pct` percent
    with the CI's confidence (for --fail-if-slower). Our own extension of the CI test of
    Bulej et al. 2020 §3 to a tolerated slowdown."""
    if not math.isfinite(pct):
        raise ValueError(f"threshold must be a finite percentage, got {pct}")
    return ratio.low > 1.0 + pct / 100.0
