"""The unit times are shown in (-u/--time-unit), shared by the terminal report and the table exports.

Standard library only: the exporters load it, and `duet --help` loads the exporters (tests/test_startup.py)."""
from __future__ import annotations

#: -u/--time-unit: unit name -> (seconds per unit, symbol, decimals).
TIME_UNITS = {"microsecond": (1e-6, "µs", 1), "millisecond": (1e-3, "ms", 2), "second": (1.0, "s", 4)}
# "auto" above one second: three decimals, as the terminal has always shown it.
_AUTO_SECONDS = (1.0, "s", 3)


def time_scale(seconds: float, unit: str | None = None) -> tuple[float, str, int]:
    """(seconds per unit, symbol, decimals) of `unit`; None or "auto": milliseconds for a time below one
    second, else seconds (a table takes the unit of its first time, so that one column has one unit)."""
    if unit in TIME_UNITS:
        return TIME_UNITS[unit]
    return TIME_UNITS["millisecond"] if seconds < 1 else _AUTO_SECONDS


def fmt_time(seconds: float, unit: str | None = None) -> str:
    """A time with its symbol in `unit` (see `time_scale`)."""
    scale, symbol, decimals = time_scale(seconds, unit)
    return f"{seconds / scale:.{decimals}f} {symbol}"


#: From this size on, a ratio bound (B a million times A) is written with significant digits and an
#: exponent: a t interval over two or three very different runs reaches e^500, which ".4f" wrote out in
#: 200 digits.
_HUGE_RATIO = 1e6


def _ratio(x: float, spec: str = ".4f") -> str:
    return f"{x:.4g}" if abs(x) >= _HUGE_RATIO else f"{x:{spec}}"


def ci_width(relative: float) -> str:
    """A ratio interval's width relative to its estimate, as a percentage; an unbounded interval (Fieller's
    [0, inf) with a few runs) says so rather than "inf%", as the verdict line does."""
    if relative == float("inf"):
        return "unbounded"
    return f"{relative * 100:.3g}%" if abs(relative) >= _HUGE_RATIO else f"{relative:.2%}"


def p_value(p: float, spec: str = ".2g") -> str:
    """A U test's p-value; one below the float range (thousands of clearly different iterations: the normal
    tail underflows to 0) as "<1e-300", not "0", a certainty no test gives; none (NaN) as "—"."""
    if p != p:
        return "—"
    return "<1e-300" if p == 0 else f"{p:{spec}}"


def ratio_interval(low: float, high: float, spec: str = ".4f") -> str:
    """A ratio interval's bounds as "low … high"; an unbounded one (Fieller's [0, inf) with a few runs) is
    worded as `duet show` and the verdict line word it, not as a number and a blank."""
    if high == float("inf"):
        return "unbounded" if low <= 0 else f"{_ratio(low, spec)} … no upper bound"
    return " … ".join("—" if bound != bound else _ratio(bound, spec) for bound in (low, high))  # NaN: no bound


def bracketed_interval(low: float, high: float) -> str:
    """A ratio interval in a table cell or list line, "[0.9500, 1.1000]"; an unbounded one (Fieller's [0, inf)
    with a few runs) worded as the verdict line words it, "[CI unbounded]" or "[0.9500, no upper bound]", not
    "[0.0000, inf]"."""
    if high == float("inf"):
        return "[CI unbounded]" if low <= 0 else f"[{_ratio(low)}, no upper bound]"
    return f"[{_ratio(low)}, {_ratio(high)}]"
