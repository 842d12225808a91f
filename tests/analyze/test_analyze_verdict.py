"""Verdicts, plain-words descriptions and the --fail-if-slower threshold."""
from __future__ import annotations

import pytest

from duetbench.analyze.ratio import RatioResult
from duetbench.analyze.verdicts import describe_change, exceeds_threshold, verdict


def _r(estimate: float, low: float, high: float, cl: float = 0.99) -> RatioResult:
    return RatioResult(estimate=estimate, low=low, high=high, confidence_level=cl, n=30)


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [(1.01, 1.05, "slower"), (0.95, 0.99, "faster"), (0.99, 1.01, "no difference"), (1.0, 1.02, "no difference")],
)
def test_verdict(low: float, high: float, expected: str) -> None:
    assert verdict(low, high) == expected


def test_verdict_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="reversed"):
        verdict(1.1, 1.0)
    with pytest.raises(ValueError, match="finite"):
        verdict(float("nan"), 1.0)


def test_describe_change_wording() -> None:
    assert describe_change(_r(1.048, 1.041, 1.055)) == "B is 4.8% slower (99% CI 4.1%–5.5%)"
    assert describe_change(_r(0.979, 0.973, 0.985)) == "B is 2.1% faster (99% CI 1.5%–2.7%)"
    assert (
        describe_change(_r(1.003, 0.996, 1.010))
        == "no difference between A and B detected (B/A = 1.003, 99% CI −0.4%…+1.0%)"
    )
    assert describe_change(_r(1.2, 1.1, 1.3, cl=0.95), "v1.0", "v1.1") == "v1.1 is 20.0% slower (95% CI 10.0%–30.0%)"


def test_describe_change_adds_decimals_for_narrow_intervals() -> None:
    assert describe_change(_r(1.00123, 1.00101, 1.00145)) == "B is 0.123% slower (99% CI 0.101%–0.145%)"
    assert describe_change(_r(1.0, 1.0, 1.0)).startswith("no difference")


def test_describe_change_says_where_an_interval_has_no_bound() -> None:
    # Fieller's interval (A's mean itself uncertain) or a short duet held off its CPU: [0, inf) or [low, inf)
    # read "-100.0%…+inf%" and "5.0%–inf%"
    inf = float("inf")
    assert describe_change(_r(2.557, 0.0, inf)) == "no difference between A and B detected (B/A = 2.557, 99% CI unbounded)"
    assert (describe_change(_r(1.2, 0.9, inf))
            == "no difference between A and B detected (B/A = 1.200, 99% CI −10.0% or more, no upper bound)")
    assert describe_change(_r(1.2, 1.05, inf)) == "B is 20.0% slower (99% CI 5.0% or more, no upper bound)"
    # ... and so do the width and the bounds in the tables (terminal, Markdown/AsciiDoc/Org, duet analyze)
    from duetbench.report.exporters._document import percent_change
    from duetbench.report.units import ci_width

    assert (ci_width(inf), ci_width(0.0123)) == ("unbounded", "1.23%")
    assert (percent_change(inf), percent_change(0.0), percent_change(1.05)) == ("unbounded", "-100.00%", "+5.00%")


def test_exceeds_threshold() -> None:
    r = _r(1.08, 1.06, 1.10)
    assert exceeds_threshold(r, 5.0)
    assert not exceeds_threshold(r, 6.0)  # the bound must lie strictly above 1.06
    assert not exceeds_threshold(r, 7.0)
    assert exceeds_threshold(_r(0.99, 0.98, 1.0), -3.0)
