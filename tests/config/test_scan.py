"""Parameter scans (-P/-D, -L): the values, their combinations, substitution, and clear errors."""
from __future__ import annotations

import pytest

from duetbench.config.scan import (
    MAX_COMPARISONS,
    list_values,
    parameter_grid,
    scan_values,
    substitute,
    unused,
)
from duetbench.errors import DuetError


def test_integer_scan_is_inclusive() -> None:
    assert scan_values("n", "1", "4", None).values == ("1", "2", "3", "4")
    assert scan_values("n", "100", "1000", "300").values == ("100", "400", "700", "1000")
    assert scan_values("n", "100", "900", "300").values == ("100", "400", "700")  # MAX not on the grid


def test_decimal_steps_are_exact() -> None:
    # Floats would give 0.30000000000000004 and stop short of 1.
    assert scan_values("x", "0", "1", "0.1").values == tuple(f"{k / 10:.1f}" for k in range(11))
    assert scan_values("x", "0.5", "1.25", "0.25").values == ("0.50", "0.75", "1.00", "1.25")


def test_list_keeps_order() -> None:
    assert list_values("impl", "fast,slow,medium").values == ("fast", "slow", "medium")


def test_grid_is_every_combination_first_parameter_slowest() -> None:
    grid = parameter_grid(("n", "1", "2"), None, [("impl", "a,b")])
    assert grid == [{"n": "1", "impl": "a"}, {"n": "1", "impl": "b"}, {"n": "2", "impl": "a"}, {"n": "2", "impl": "b"}]
    assert parameter_grid(None, None, []) == []


def test_substitute_replaces_only_parameters() -> None:
    values = {"n": "10", "mode": "fast"}
    assert substitute("awk '{print $1}' data-{n}.txt --{mode} {other}", values) == \
        "awk '{print $1}' data-10.txt --fast {other}"
    assert unused(["n", "mode"], ["sort {n}", "sort -r {n}"]) == ["mode"]


@pytest.mark.parametrize(("call", "message"), [
    (lambda: scan_values("1n", "1", "2", None), "not a name"),
    (lambda: scan_values("n", "a", "2", None), "MIN 'a' is not a number"),
    (lambda: scan_values("n", "1", "inf", None), "MAX 'inf' is not a number"),
    (lambda: scan_values("n", "0.5", "2", None), "not both integers"),
    (lambda: scan_values("n", "1", "2", "0"), "step must be > 0"),
    (lambda: scan_values("n", "5", "2", None), "larger than MAX"),
    (lambda: scan_values("n", "0", "1", "0.0001"), "10001 comparisons"),
    (lambda: list_values("n", "1,,2"), "empty value"),
    (lambda: list_values("n", "1,2,1"), "listed twice"),
    (lambda: parameter_grid(None, "2", []), "needs --parameter-scan"),
    (lambda: parameter_grid(("n", "1", "2"), None, [("n", "3,4")]), "given twice"),
    (lambda: parameter_grid(None, None, [("a", ",".join(map(str, range(40)))), ("b", ",".join(map(str, range(40))))]),
     "1600 combinations"),
])
def test_bad_scans_are_clear_errors(call, message: str) -> None:
    with pytest.raises(DuetError, match=message) as info:
        call()
    assert info.value.hint


def test_the_limit_itself_is_allowed() -> None:
    assert len(scan_values("n", "1", str(MAX_COMPARISONS), None).values) == MAX_COMPARISONS


def test_list_values_unescape_commas_and_backslashes_as_hyperfine() -> None:
    # hyperfine's -L: "\," is a comma within a value, "\\" a backslash; other backslashes stay.
    assert list_values("x", r"a\,b,c").values == ("a,b", "c")
    assert list_values("sep", r"\,,;").values == (",", ";")
    assert list_values("x", r"a\\,b").values == ("a\\", "b")
    assert list_values("x", r"a\\\,b,\n").values == (r"a\,b", r"\n")


def test_scan_values_are_plain_exact_decimals() -> None:
    # Not 1E-7 or 0E-7 (str of a Decimal), which the command would get as its argument.
    assert scan_values("x", "0", "0.0000003", "1e-7").values == ("0.0000000", "0.0000001", "0.0000002", "0.0000003")
    assert scan_values("n", "1e2", "2e2", "50").values == ("100", "150", "200")
    # Beyond the 28 digits of decimal's default context, nothing is rounded.
    big = "1" + "0" * 28
    assert scan_values("n", big + "1", big + "3", None).values == (big + "1", big + "2", big + "3")


@pytest.mark.parametrize(("low", "high", "step"), [
    ("1e500", "1e500", None), ("1", "1e999999999", None), ("1", "2", "1e-400"), ("0", "1", "1e-31"),
])
def test_numbers_of_absurd_size_are_refused_in_one_line(low: str, high: str, step: str | None) -> None:
    with pytest.raises(DuetError, match="digits") as info:
        scan_values("n", low, high, step)
    assert len(str(info.value)) < 200 and info.value.hint
