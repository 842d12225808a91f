"""An unbounded ratio interval (Fieller's [0, inf) with a few runs) in the terminal's tables: `duet analyze`,
`duet run`'s closing summary and a scan's table read "[CI unbounded]" as `duet show`'s list and the verdict
line do; they printed "[0.0000, inf]"."""
from __future__ import annotations

import io
import math

import msgspec
from rich.console import Console

from duetbench.analyze.api import AnalysisRow
from duetbench.report.analysis import print_rows
from duetbench.report.campaign import print_summary
from duetbench.report.units import bracketed_interval


def test_the_bracket_words_an_unbounded_interval() -> None:
    assert bracketed_interval(0.0, math.inf) == "[CI unbounded]"
    assert bracketed_interval(1.02, math.inf) == "[1.0200, no upper bound]"
    assert bracketed_interval(0.98, 1.03) == "[0.9800, 1.0300]"


def test_campaign_tables_say_unbounded(make_table, make_results) -> None:
    table = make_table(["wild"], methods=("sequential",), runs=3, iterations=10)
    bench, method, result, _ = make_results(table)[0]
    assert result is not None
    unbounded = msgspec.structs.replace(result, ratio=msgspec.structs.replace(result.ratio, low=0.0, high=math.inf),
                                        relative_ci_width=math.inf, verdict="no difference")
    rows = [AnalysisRow(bench, method, 3, 30, 30, unbounded)]
    for render in (lambda c: print_rows(c, rows, title="analysis"), lambda c: print_summary(c, rows, 0.99)):
        out = io.StringIO()
        render(Console(file=out, width=200, color_system=None))
        text = out.getvalue()
        assert "[CI unbounded]" in text and "inf" not in text, text
