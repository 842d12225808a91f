"""Student's t distribution: its CDF and quantile, in the standard library's floating point.

Why not `scipy.special.stdtrit`: importing `scipy.special` costs ~150 ms of CPU on top of numpy
(measured on the project's 2-vCPU VM, scipy 1.17; its array-API layer walks every numpy attribute and
so loads `numpy.f2py`), paid by every `duet compare` between its last pair and its answer, on a CPU
that a comparison of short commands needs (issue 17). The quantile is the only function of scipy's
the comparison path used. It is checked against scipy to 1e-10 relative in
`tests/analyze/test_tdist.py` over degrees of freedom 0.5 … 1e9 and tail probabilities 1e-12 … 0.5.

Method: the t CDF through the regularized incomplete beta function, I_x(a, b) by its continued
fraction evaluated with the modified Lentz algorithm ([DLMF] 8.17.22; [Press 2007] §6.4), the
quantile by safeguarded Newton iteration on the CDF (bisection whenever a step leaves the bracket);
with many degrees of freedom, Cornish–Fisher's expansion ([Abramowitz 1964] 26.7.5).
"""
from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

_TINY = 1e-300
_EPS = 1e-15
# From this many degrees of freedom on, the quantile is Cornish–Fisher's expansion around the normal
# one ([Abramowitz 1964] 26.7.5, four terms): its first omitted term is below 1e-17 relative there,
# while the continued fraction would need ~sqrt(df) terms.
_EXPANSION_DF = 1e5
# From here on lgamma(c + 1/2) - lgamma(c) is taken from its asymptotic series: the difference of two
# lgamma values near c·log(c) would lose their leading digits.
_ASYMPTOTIC_C = 1e3


def _lgamma_half_ratio(c: float) -> float:
    """log Γ(c + 1/2) − log Γ(c), accurate also for large c."""
    if c < _ASYMPTOTIC_C:
        return math.lgamma(c + 0.5) - math.lgamma(c)
    # log of Γ(c+1/2)/Γ(c) = √c (1 − 1/(8c) + 1/(128c²) + 5/(1024c³) − …); terms beyond c⁻³ are < 1e-15 here.
    return 0.5 * math.log(c) - 1.0 / (8.0 * c) + 1.0 / (192.0 * c ** 3)


def _log_beta(a: float, b: float) -> float:
    """log B(a, b), with the t distribution's case (one parameter 1/2) kept accurate for a large other."""
    if b == 0.5:
        return math.lgamma(0.5) - _lgamma_half_ratio(a)
    if a == 0.5:
        return math.lgamma(0.5) - _lgamma_half_ratio(b)
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of I_x(a, b) (without its prefactor), modified Lentz; converges fast for
    x < (a + 1) / (a + b + 2)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            return h
    raise ArithmeticError(f"incomplete beta continued fraction did not converge (a={a}, b={b}, x={x})")


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """Regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 ≤ x ≤ 1; `y` = 1 − x when the
    caller knows it more precisely than 1 − x would give it."""
    y = 1.0 - x if y is None else y
    if not (a > 0 and b > 0 and 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
        raise ValueError(f"betainc needs a, b > 0 and 0 <= x <= 1 (got a={a}, b={b}, x={x})")
    if x == 0.0 or y == 0.0:
        return 0.0 if x == 0.0 else 1.0
    log_front = a * math.log(x) + b * math.log(y) - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _betacf(a, b, x) / a
    return 1.0 - math.exp(log_front) * _betacf(b, a, y) / b


def _t_sf(t: float, df: float) -> float:
    """Upper tail P(T > t) of Student's t with 0 < `df` < _EXPANSION_DF degrees of freedom (beyond, the
    continued fraction needs too many terms; `t_isf` does not ask there)."""
    if df <= 0 or math.isnan(df):
        raise ValueError(f"degrees of freedom must be positive (got {df})")
    if t == 0.0:
        return 0.5
    t2 = t * t
    # P(|T| > |t|) = I_x(df/2, 1/2) with x = df/(df+t²) ([Abramowitz 1964] 26.7.1), 1 − x passed exactly.
    tail2 = betainc(df / 2.0, 0.5, df / (df + t2), t2 / (df + t2))
    return tail2 / 2.0 if t > 0 else 1.0 - tail2 / 2.0


def _t_pdf(t: float, df: float) -> float:
    log_c = _lgamma_half_ratio(df / 2.0) - 0.5 * math.log(df * math.pi)
    return math.exp(log_c - (df + 1.0) / 2.0 * math.log1p(t * t / df))


@lru_cache(maxsize=1024)
def t_isf(q: float, df: float) -> float:
    """The t with P(T > t) = q for Student's t with `df` degrees of freedom; 0 < q < 1.

    Comparisons ask for the same few (confidence, degrees of freedom) pairs again and again: cached."""
    if not 0.0 < q < 1.0:
        raise ValueError(f"tail probability must be in (0, 1) (got {q})")
    if df <= 0 or math.isnan(df):
        raise ValueError(f"degrees of freedom must be positive (got {df})")
    if q > 0.5:
        return -t_isf(1.0 - q, df)
    if q == 0.5:
        return 0.0
    if df >= _EXPANSION_DF:
        z = -NormalDist().inv_cdf(q)
        z2 = z * z
        g1 = (z2 + 1.0) * z / 4.0
        g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
        g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
        g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
        return z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df
    if df == 1.0:  # Cauchy: closed form
        return 1.0 / math.tan(math.pi * q)
    if df == 2.0:  # closed form ([DLMF] 8.17.2 with a = 1, b = 1/2)
        p = 2.0 * q  # t² = 2/(p(2 − p)) − 2, written without the cancellation near p = 1
        return (1.0 - p) * math.sqrt(2.0 / (p * (2.0 - p)))
    # Bracket [low, high] with sf(low) > q > sf(high); start from the normal quantile, which is
    # never beyond the t quantile.
    low = -NormalDist().inv_cdf(q)
    high = max(2.0 * low, 1.0)
    while _t_sf(high, df) > q:
        low, high = high, high * 2.0
    t = (low + high) / 2.0
    for _ in range(200):
        f = _t_sf(t, df) - q
        if f > 0:
            low = t
        else:
            high = t
        step = f / _t_pdf(t, df)  # sf' = -pdf, so Newton's step on sf(t) - q is +f/pdf
        candidate = t + step
        if not low < candidate < high:
            candidate = (low + high) / 2.0
        if abs(candidate - t) <= 1e-14 * abs(candidate):
            return candidate
        t = candidate
        if high - low <= 1e-15 * high:
            return t
    return t
