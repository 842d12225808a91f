"""The run counts a comparison shows (its header, its range, a scan's table): the runs measured per side,
as hyperfine counts them, whatever the robust pair filter sets aside for the interval."""
from __future__ import annotations

import io

import numpy as np
from rich.console import Console

from duetbench.analyze.comparison import compare
from duetbench.report.exporters.markdown import EXPORTER as MARKDOWN
from duetbench.report.model import ComparisonReport, ScanEntry, ScanReport
from duetbench.report.terminal import render


def _markdown(subject: ScanReport) -> str:
    text = MARKDOWN.render(subject)
    return text if isinstance(text, str) else text.decode()


def _report(a: np.ndarray, b: np.ndarray, method: str = "duet") -> ComparisonReport:
    result = compare(method, a, b, random_state=1)
    return ComparisonReport(id=1, status="complete", method=method, names={"A": "A", "B": "B"},
                            commands={"A": "a", "B": "b"}, seed=1, options={}, host={}, tool_version="0",
                            primary_metric="wall", results={"wall": result}, invocations=[])


def _printed(a: np.ndarray, b: np.ndarray, method: str = "duet") -> str:
    out = io.StringIO()
    render(_report(a, b, method), Console(file=out, width=200, color_system=None))
    return out.getvalue()


def _disturbed() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    a = 0.020 * (1 + 0.003 * rng.standard_normal(50))
    b = a * (1 + 0.003 * rng.standard_normal(50))
    b[[5, 17, 33]] *= 1.5  # three pairs where B alone was disturbed: the filter sets them aside
    return a, b


def test_the_header_counts_the_runs_measured_not_those_left_after_the_pair_filter() -> None:
    a, b = _disturbed()
    text = _printed(a, b)
    assert compare("duet", a, b, random_state=1).outliers_removed == 3
    assert "· 50 runs ·" in text.splitlines()[0], text
    assert "(wall, 50 runs)" in text and "3 outlier pair(s) set aside" in text, text
    assert "47 runs" not in text, text


def test_sides_measured_unequally_show_both_counts() -> None:
    # a sequential comparison cut short (Ctrl-C) after A's 12th run and B's 11th
    rng = np.random.default_rng(3)
    a, b = 0.020 * (1 + 0.01 * rng.standard_normal(12)), 0.021 * (1 + 0.01 * rng.standard_normal(11))
    text = _printed(a, b, "sequential")
    assert "· 12 + 11 runs ·" in text.splitlines()[0], text


def test_a_scans_table_counts_the_runs_measured() -> None:
    a, b = _disturbed()
    table = _markdown(ScanReport([ScanEntry({"n": "1"}, _report(a, b))]))
    row = next(line for line in table.splitlines() if line.startswith("| 1 |"))
    assert row.rstrip().endswith("| 50 |"), table


def test_the_exports_count_unequal_sides_as_the_terminal_does() -> None:
    # One derivation for every report: the Markdown paragraph and a scan's table read "12 + 11" too,
    # where they showed the pairs the interval is over (11).
    rng = np.random.default_rng(3)
    a, b = 0.020 * (1 + 0.01 * rng.standard_normal(12)), 0.021 * (1 + 0.01 * rng.standard_normal(11))
    report = _report(a, b, "sequential")
    paragraph = _markdown(report)  # type: ignore[arg-type]
    assert "wall time, 12 + 11 runs" in paragraph, paragraph
    table = _markdown(ScanReport([ScanEntry({"n": "1"}, report)]))
    row = next(line for line in table.splitlines() if line.startswith("| 1 |"))
    assert row.rstrip().endswith("| 12 + 11 |"), table
