"""Parameter scans of ``duet compare``: one comparison per parameter value, as hyperfine's -P/-D and -L.

``-P size 100 1000 -D 300`` gives size = 100, 400, 700, 1000; ``-L impl fast,slow`` gives the listed
values (``\\,`` a comma within one); several parameters give every combination (the first varies slowest,
unlike hyperfine's, where it varies fastest). ``{size}`` in the commands, the names and the
prepare/setup/cleanup commands is replaced by the value; other braces are left alone, so
``awk '{print $1}'`` needs no escaping (hyperfine behaves the same).
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal, InvalidOperation, localcontext

import msgspec

from duetbench.errors import DuetError

#: A scan this large is almost certainly a typo in MIN, MAX or the step.
MAX_COMPARISONS = 1000

#: Digits a -P value may have before or after its point: more is a typo (1e500), and the command would get a
#: number hundreds of digits long; within it, the arithmetic below is exact.
MAX_DIGITS = 30

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: In -L's values: an escaped comma or backslash, a separating comma, or any other character.
_LIST_TOKEN = re.compile(r"\\[\\,]|,|.", re.DOTALL)


class Parameter(msgspec.Struct, frozen=True):
    name: str
    values: tuple[str, ...]


def _check_name(name: str, option: str) -> str:
    if not _NAME.match(name):
        raise DuetError(f"{option}: parameter name {name!r} is not a name",
                        hint="use letters, digits and _ (not starting with a digit), e.g. -L size 10,100")
    return name


def _number(text: str, option: str, what: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        value = Decimal("nan")
    if not value.is_finite():
        raise DuetError(f"{option}: {what} {text!r} is not a number", hint="e.g. -P threads 1 8, or -D 0.5")
    if value and (value.adjusted() >= MAX_DIGITS or int(value.as_tuple().exponent) < -MAX_DIGITS):
        raise DuetError(f"{option}: {what} {text!r} has more than {MAX_DIGITS} digits before or after the point",
                        hint="e.g. -P threads 1 8, or -D 0.5")
    return value


def scan_values(name: str, low: str, high: str, step: str | None) -> Parameter:
    """``-P NAME MIN MAX`` with ``-D STEP`` (default 1): MIN, MIN+STEP, … up to MAX, inclusive.

    Decimal arithmetic, so ``-P x 0 1 -D 0.1`` ends at exactly 1.0 (floats would stop at 0.9999…).
    Without -D the bounds must be integers, as in hyperfine."""
    _check_name(name, "--parameter-scan")
    lo = _number(low, "--parameter-scan", "MIN")
    hi = _number(high, "--parameter-scan", "MAX")
    if step is None:
        if lo != lo.to_integral_value() or hi != hi.to_integral_value():
            raise DuetError(f"--parameter-scan {name}: {low} and {high} are not both integers",
                            hint="give a step for decimal values, e.g. -D 0.5")
        delta = Decimal(1)
    else:
        delta = _number(step, "--parameter-step-size", "step")
        if delta <= 0:
            raise DuetError(f"--parameter-step-size: the step must be > 0, got {step}", hint="e.g. -D 0.5")
    if hi < lo:
        raise DuetError(f"--parameter-scan {name}: MIN {low} is larger than MAX {high}",
                        hint="give the smaller value first")
    # Precision for every digit the bounds and step can have (MAX_DIGITS), so nothing below is rounded: the
    # default 28 digits would round 10000000000000000000000000000001 + 1, and refuse to print 1e40 exactly.
    with localcontext(prec=4 * MAX_DIGITS):
        count = int((hi - lo) / delta) + 1
        if count > MAX_COMPARISONS:
            shown = str(count) if count < 10**7 else f"{count:.2g}"
            raise DuetError(f"--parameter-scan {name} {low} {high} would make {shown} comparisons",
                            hint=f"at most {MAX_COMPARISONS}: use a larger -D step or a narrower range")
        # Every value is printed with the precision of the step or bounds, whichever is finest, and in plain
        # digits (str() would give the command 1E-7 or 0E-7 for a step of 1e-7).
        exponent = min(int(v.as_tuple().exponent) for v in (lo, hi, delta, Decimal(1)))  # finite: int exponents
        quantum = Decimal(1).scaleb(exponent)
        return Parameter(name, tuple(format((lo + k * delta).quantize(quantum), "f") for k in range(count)))


def list_values(name: str, text: str) -> Parameter:
    """``-L NAME a,b,c``: the listed values, in order; ``\\,`` is a comma within a value and ``\\\\`` a
    backslash, as in hyperfine (``-L sep '\\,,;'``: "," and ";"); any other backslash is kept."""
    _check_name(name, "--parameter-list")
    values = _split_list(text)
    if any(not v for v in values):
        raise DuetError(f"--parameter-list {name}: empty value in {text!r}",
                        hint="separate values by single commas, e.g. -L size 10,100,1000")
    if len(set(values)) != len(values):
        raise DuetError(f"--parameter-list {name}: a value is listed twice in {text!r}",
                        hint="list every value once")
    return Parameter(name, values)


def _split_list(text: str) -> tuple[str, ...]:
    values: list[str] = []
    current: list[str] = []
    for token in _LIST_TOKEN.findall(text):
        if token == ",":
            values.append("".join(current))
            current = []
        else:
            current.append(token[-1] if len(token) == 2 else token)
    return (*values, "".join(current))


def parameter_grid(scan: tuple[str, str, str] | None, step: str | None,
                   lists: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """Every combination of the parameters' values, the first parameter varying slowest; [] for no scan."""
    params = [scan_values(*scan, step)] if scan else []
    if step is not None and not scan:
        raise DuetError("--parameter-step-size needs --parameter-scan", hint="e.g. -P size 100 1000 -D 100")
    params += [list_values(name, text) for name, text in lists]
    names = [p.name for p in params]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise DuetError(f"parameter {duplicate!r} is given twice", hint="give each parameter once")
    if not params:
        return []
    grid = [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(p.values for p in params))]
    if len(grid) > MAX_COMPARISONS:
        raise DuetError(f"the parameters make {len(grid)} combinations, each a comparison",
                        hint=f"at most {MAX_COMPARISONS}: scan fewer values")
    return grid


def substitute(template: str, values: Mapping[str, str]) -> str:
    """``template`` with ``{name}`` replaced for every parameter name; any other text is kept as it is."""
    if not values:
        return template
    pattern = re.compile(r"\{(" + "|".join(re.escape(n) for n in values) + r")\}")
    return pattern.sub(lambda m: values[m.group(1)], template)


def unused(names: Iterable[str], templates: Iterable[str]) -> list[str]:
    """Parameters that appear in none of the templates (every comparison of the scan would be alike)."""
    text = "\n".join(templates)
    return [n for n in names if "{" + n + "}" not in text]
