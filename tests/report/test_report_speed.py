"""The summary of three or more commands (report/speed.py): which is the fastest, the factors against it or
against the reference, which are derived, the order of --sort, and how it reads; and the order --sort gives
a series' tables (report/scan.sorted_entries)."""
from __future__ import annotations

import io
import math
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from duetbench.analyze.ratio import RatioResult
from duetbench.report.model import ScanEntry
from duetbench.report.scan import sorted_entries
from duetbench.report.speed import render_speed_summary, speed_summary


def _entry(reference: str, name: str, ratio: tuple[float, float, float] | None) -> ScanEntry:
    """One finished comparison of `name` against `reference`: only what the summary reads of its report."""
    primary = None
    if ratio is not None:
        primary = SimpleNamespace(ratio=RatioResult(*ratio, confidence_level=0.99, n=10, interval="t"))
    report: Any = SimpleNamespace(names={"A": reference, "B": name}, primary=primary, primary_metric="wall")
    return ScanEntry({"command": name}, report)


# base is the reference; x 2.0× base's time, quick 0.5×, same ≈ base
ENTRIES = [_entry("base", "x", (2.0, 1.9, 2.1)), _entry("base", "quick", (0.5, 0.48, 0.52)),
           _entry("base", "same", (1.01, 0.98, 1.04))]
NAMES = ["base", "x", "quick", "same"]


def _text(summary: Any) -> str:
    out = io.StringIO()
    render_speed_summary(summary, Console(file=out, width=300, no_color=True))
    return out.getvalue()


def test_the_fastest_heads_the_summary_and_factors_through_the_reference_are_marked() -> None:
    s = speed_summary(ENTRIES, NAMES, "base", relative_to="fastest", sort="auto")
    assert s is not None and s.head == "quick"
    rows = {r.name: r for r in s.rows}
    assert list(rows) == ["base", "same", "x"]  # by time, the fastest first
    assert rows["base"].via is None and rows["x"].via == "base" and rows["same"].via == "base"
    base = rows["base"].ratio
    assert base is not None and (base.estimate, base.low, base.high) == pytest.approx((2.0, 1 / 0.52, 1 / 0.48))
    x = rows["x"].ratio
    # combined in quadrature on the log scale: narrower than the crude bounds 1.9/0.52 … 2.1/0.48
    assert x is not None and x.estimate == pytest.approx(4.0)
    assert 1.9 / 0.52 < x.low < 3.8 and 4.2 < x.high < 2.1 / 0.48
    text = _text(s)
    assert "quick was the fastest" in text and "  quick ran" in text
    assert "4.00 times faster than x (CI" in text and ", via base)" in text
    assert "2.00 times faster than base (CI 1.923 … 2.083)" in text
    assert "via base: every command was measured against base" in text


def test_sort_command_keeps_the_order_given() -> None:
    s = speed_summary(ENTRIES, NAMES, "base", relative_to="fastest", sort="command")
    assert s is not None and [r.name for r in s.rows] == ["base", "x", "same"]
    s = speed_summary(ENTRIES, NAMES, "base", relative_to="reference", sort="mean-time")
    assert s is not None and [r.name for r in s.rows] == ["quick", "same", "x"]


def test_relative_to_the_reference_says_faster_slower_and_no_difference() -> None:
    s = speed_summary(ENTRIES, NAMES, "base", relative_to="reference", sort="command")
    assert s is not None and s.head == "base" and all(r.via is None for r in s.rows)
    text = _text(s)
    assert "against the reference base" in text and "  base ran" in text
    assert "2.00 times faster than x (CI 1.900 … 2.100)" in text
    assert "2.00 times slower than quick (CI 1.923 … 2.083)" in text
    assert "as fast as same: no difference detected (same/base = 1.010" in text
    assert "via" not in text


def test_without_statistics_unfinished_and_unbounded() -> None:
    entries = [_entry("base", "x", None), _entry("base", "y", (1.2, 0.0, math.inf))]
    s = speed_summary(entries, ["base", "x", "y", "never-ran"], "base", relative_to="fastest", sort="auto")
    # y's factor is unbounded: its estimate still says base is faster; x had no statistics; never-ran is left out
    assert s is not None and s.head == "base" and [r.name for r in s.rows] == ["y", "x"]
    text = _text(s)
    # worded as the verdict line and the tables word it, not "CI 0.000 … inf"
    assert "no statistics against x" in text and "as fast as y: no difference detected" in text
    assert "CI unbounded" in text and "inf" not in text
    assert speed_summary([], ["base", "x"], "base", relative_to="fastest", sort="auto") is None
    # no statistics at all: nothing to rank, so no command is called the fastest
    s = speed_summary(entries[:1], ["base", "x"], "base", relative_to="fastest", sort="auto")
    assert s is not None and s.relative_to == "reference" and "was the fastest" not in _text(s)
    # the fastest is unbounded against the reference: every factor through it is too, never an error
    entries = [_entry("base", "a", (0.5, 0.0, math.inf)), _entry("base", "b", (2.0, 1.9, 2.1))]
    s = speed_summary(entries, ["base", "a", "b"], "base", relative_to="fastest", sort="auto")
    assert s is not None and s.head == "a"
    assert all(r.ratio is not None and r.ratio.low == 0.0 for r in s.rows)
    assert "no difference detected" in _text(s)


def test_sorted_entries_by_time_without_statistics_last() -> None:
    entries = [_entry("base", "x", (2.0, 1.9, 2.1)), _entry("base", "none", None),
               _entry("base", "quick", (0.5, 0.48, 0.52)), _entry("base", "nan", (math.nan, math.nan, math.nan))]
    for e in entries:
        e.report.benchmark = None
    assert [e.parameters["command"] for e in sorted_entries(entries, "mean-time")] == ["quick", "x", "none", "nan"]
    for sort in ("auto", "command"):
        assert sorted_entries(entries, sort) == entries
    # one command benchmarked per value of a scan: by its mean
    reports: list[Any] = [SimpleNamespace(benchmark=SimpleNamespace(mean=mean), primary=None)
                          for mean in (0.3, 0.1, 0.2)]
    benchmarks = [ScanEntry({"n": str(n)}, report) for n, report in enumerate(reports, 1)]
    assert [e.parameters["n"] for e in sorted_entries(benchmarks, "mean-time")] == ["2", "3", "1"]
