"""Output of `duet analyze`: the terminal table, and each row as the exports write it (report/exporters/)."""
from __future__ import annotations

import math
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.analyze.api import AnalysisRow
from duetbench.analyze.verdicts import describe_change
from duetbench.report.units import bracketed_interval, ci_width, p_value
from duetbench.report.wide import print_table

COLUMNS = ("benchmark", "method", "runs", "iterations_a", "iterations_b", "median_a_s", "median_b_s", "mean_a_s",
           "mean_b_s", "ratio", "ci_low", "ci_high",
           "confidence_level", "verdict", "u_test_p", "cv_a", "cv_b", "relative_ci_width", "change", "problem",
           "pairing", "sync", "notes")


def _num(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def row_dict(row: AnalysisRow) -> dict[str, Any]:
    r = row.result
    return {
        "benchmark": row.benchmark, "method": row.method, "runs": row.runs,
        "iterations_a": row.iterations_a, "iterations_b": row.iterations_b,
        # Each side's time per iteration, in seconds: a ratio alone does not say what was measured.
        "median_a_s": _num(r.a.median) if r else None, "median_b_s": _num(r.b.median) if r else None,
        "mean_a_s": _num(r.a.mean) if r else None, "mean_b_s": _num(r.b.mean) if r else None,
        "ratio": _num(r.ratio.estimate) if r else None, "ci_low": _num(r.ratio.low) if r else None,
        "ci_high": _num(r.ratio.high) if r else None,
        "confidence_level": r.ratio.confidence_level if r else None,
        "verdict": r.verdict if r else None, "u_test_p": _num(r.u_test_p) if r else None,
        "cv_a": _num(r.a.cv) if r else None, "cv_b": _num(r.b.cv) if r else None,
        "relative_ci_width": _num(r.relative_ci_width) if r else None,
        "change": describe_change(r.ratio, "A", "B") if r else None,
        "problem": row.problem, "pairing": row.pairing or None, "sync": row.sync or None, "notes": list(row.notes),
    }


def print_rows(console: Console, rows: list[AnalysisRow], *, title: str) -> None:
    from duetbench.report.campaign import U_TEST_NOTE, duration, p_contradicts, runs_column

    table = Table(title=title, title_justify="left")
    for column in ("benchmark", "method", "runs", "iters A/B", "A / B per iteration (median)", "ratio B/A [CI]",
                   "verdict", "U p", "CV A/B", "CI width"):
        table.add_column(column, no_wrap=column.startswith(("ratio", "A / B")))
    problems: list[AnalysisRow] = []
    p_marks: list[AnalysisRow] = []
    for row in rows:
        base = [escape(row.benchmark), row.method, runs_column(row, markup=True),
                f"{row.iterations_a}/{row.iterations_b}"]
        r = row.result
        if r is None:
            problems.append(row)
            table.add_row(*base, "", f"[yellow]no result ({len(problems)})[/yellow]", "", "", "", "")
            continue
        colour = {"slower": "red", "faster": "green"}.get(r.verdict, "white")
        p_mark = ""
        if p_contradicts(r.verdict, r.u_test_p, r.ratio.confidence_level):
            p_marks.append(row)
            p_mark = f" [dim]({'†' * len(p_marks)})[/dim]"
        table.add_row(*base, f"{duration(r.a.median)} / {duration(r.b.median)}",
                      f"{r.ratio.estimate:.4f} {bracketed_interval(r.ratio.low, r.ratio.high)}",
                      f"[{colour}]{r.verdict}[/{colour}]", f"{p_value(r.u_test_p)}{p_mark}",
                      f"{r.a.cv:.1%}/{r.b.cv:.1%}", ci_width(r.relative_ci_width))
    print_table(console, table)
    for number, row in enumerate(problems, start=1):
        console.print(f"[yellow]({number})[/yellow] {escape(row.benchmark)} · {row.method}: {escape(row.problem)}",
                      soft_wrap=True, highlight=False)
    for number, row in enumerate(p_marks, start=1):
        console.print(f"[dim]({'†' * number})[/dim] {escape(row.benchmark)} · {row.method}: {U_TEST_NOTE}",
                      soft_wrap=True, highlight=False)
    noted = [row for row in rows if row.notes]
    for row in noted:
        for note in row.notes:
            console.print(f"[dim]note[/dim] {escape(row.benchmark)} · {row.method}: {escape(note)}", soft_wrap=True,
                          highlight=False)


def slower_than(rows: list[AnalysisRow], threshold_pct: float) -> list[AnalysisRow]:
    """Rows whose whole CI lies above 1 + threshold: slower by more than the threshold, with confidence."""
    limit = 1 + threshold_pct / 100
    return [r for r in rows if r.result is not None and r.result.ratio.low > limit]
