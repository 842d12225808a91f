"""A parameter scan's comparisons side by side in the terminal (its exports: report/exporters/)."""
from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.report.model import ScanEntry
from duetbench.report.units import bracketed_interval
from duetbench.report.wide import print_table

__all__ = ["ScanEntry", "render_scan", "sorted_entries"]


def _names(entries: list[ScanEntry]) -> list[str]:
    return list(entries[0].parameters) if entries else []


def sorted_entries(entries: list[ScanEntry], sort: str) -> list[ScanEntry]:
    """The entries in the order of a table under --sort (hyperfine's): as they ran, or with "mean-time"
    by time — B/A of a comparison, the mean of one command benchmarked alone — the fastest first and
    those without statistics last."""
    if sort != "mean-time":
        return list(entries)

    def key(e: ScanEntry) -> tuple[bool, float]:
        value = (e.report.benchmark.mean if e.report.benchmark is not None
                 else e.report.primary.ratio.estimate if e.report.primary is not None else math.nan)
        missing = math.isnan(value)  # no statistics: last, in the order they ran (sorted is stable)
        return (missing, 0.0 if missing else value)

    return sorted(entries, key=key)


def render_scan(entries: list[ScanEntry], console: Console, planned: int, time_unit: str | None = None) -> None:
    """One row per comparison: the parameter values, B/A with its CI, the verdict (one command: its mean
    ± σ and range)."""
    if not entries:
        return
    if all(e.report.method == "single" for e in entries):
        _render_single_scan(entries, console, planned, time_unit)
        return
    level = next((e.report.primary.ratio.confidence_level for e in entries if e.report.primary), 0.99)
    table = Table(title=f"parameter scan: {len(entries)} of {planned} comparisons (B/A, > 1 means B is slower)",
                  title_justify="left")
    for name in _names(entries):
        table.add_column(escape(name), justify="right")
    for column in ("#", f"B/A [{level:.0%} CI]", "verdict", "runs"):
        table.add_column(column, justify="right" if column in ("#", "runs") else "left")
    for e in entries:
        p = e.report.primary
        cells = [escape(v) for v in e.parameters.values()] + [str(e.report.id)]
        if p is None:
            cells += ["[yellow]no statistics[/yellow]", "", ""]
        else:
            colour = {"slower": "red", "faster": "green"}.get(p.verdict, "white")
            cells += [f"{p.ratio.estimate:.4f} {bracketed_interval(p.ratio.low, p.ratio.high)}",
                      f"[{colour}]{p.verdict}[/{colour}]", str(p.runs)]
        table.add_row(*cells)
    print_table(console, table)


def _render_single_scan(entries: list[ScanEntry], console: Console, planned: int, time_unit: str | None) -> None:
    from duetbench.report.units import fmt_time

    table = Table(title=f"parameter scan: {len(entries)} of {planned} benchmarks of one command", title_justify="left")
    for name in _names(entries):
        table.add_column(escape(name), justify="right")
    for column in ("#", "mean ± σ", "min … max", "runs"):
        table.add_column(column, justify="right")
    for e in entries:
        b = e.report.benchmark
        cells = [escape(v) for v in e.parameters.values()] + [str(e.report.id)]
        if b is None:
            cells += ["[yellow]no statistics[/yellow]", "", ""]
        else:
            sd = fmt_time(b.stdev, time_unit) if b.stdev == b.stdev else "–"
            cells += [f"{fmt_time(b.mean, time_unit)} ± {sd}",
                      f"{fmt_time(b.min, time_unit)} … {fmt_time(b.max, time_unit)}", str(b.runs)]
        table.add_row(*cells)
    print_table(console, table)

