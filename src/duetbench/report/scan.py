"""A parameter scan's comparisons side by side: terminal table, JSON, CSV and Markdown."""
from __future__ import annotations

import csv
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.report.safe_text import csv_row, markdown_text
from duetbench import __version__
from duetbench.errors import DuetError
from duetbench.execute.invocation import Invocation
from duetbench.report.export import (
    JSON_FORMAT_VERSION,
    clean_json,
    percent_change,
    to_json_dict,
)
from duetbench.report.model import ComparisonReport


@dataclass(frozen=True)
class ScanEntry:
    parameters: dict[str, str]
    report: ComparisonReport


def _names(entries: list[ScanEntry]) -> list[str]:
    return list(entries[0].parameters) if entries else []


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
            cells += [f"{p.ratio.estimate:.4f} [{p.ratio.low:.4f}, {p.ratio.high:.4f}]",
                      f"[{colour}]{p.verdict}[/{colour}]", str(p.runs)]
        table.add_row(*cells)
    console.print(table)


def _render_single_scan(entries: list[ScanEntry], console: Console, planned: int, time_unit: str | None) -> None:
    from duetbench.report.terminal import fmt_time

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
    console.print(table)


def to_scan_json(entries: list[ScanEntry]) -> dict[str, Any]:
    return clean_json({
        "version": JSON_FORMAT_VERSION,
        "tool": {"name": "duetbench", "version": __version__},
        "parameters": _names(entries),
        "scan": [{"parameters": e.parameters, **to_json_dict(e.report)} for e in entries],
    })


def to_scan_markdown(entries: list[ScanEntry]) -> str:
    if not entries:
        return "### duetbench parameter scan: no comparison finished\n"
    first = entries[0].report
    names = _names(entries)
    level = next((e.report.primary.ratio.confidence_level for e in entries if e.report.primary), 0.99)
    scanning = ", ".join(markdown_text(n) for n in names)
    lines = [f"### duetbench: {markdown_text(first.names['B'])} vs {markdown_text(first.names['A'])} ({first.method}), "
             f"scanning {scanning}", "",
             "| " + " | ".join(markdown_text(n) for n in names) + f" | B/A | {level:.0%} CI | verdict | runs |",
             "|" + "---:|" * len(names) + "---:|---|---|---:|"]
    for e in entries:
        p = e.report.primary
        values = " | ".join(markdown_text(v) for v in e.parameters.values())
        if p is None:
            lines.append(f"| {values} | – | – | no statistics | 0 |")
        else:
            lines.append(f"| {values} | {p.ratio.estimate:.4f} | {percent_change(p.ratio.low)} … {percent_change(p.ratio.high)} | "
                         f"{p.verdict} | {p.runs} |")
    lines += ["", f"<sub>duetbench {first.tool_version}, {first.primary_metric} time, seed {first.seed}</sub>", ""]
    return "\n".join(lines)


def write_scan_csv(entries: list[ScanEntry], path: Path) -> None:
    """One row per invocation, as `--export-csv` of one comparison, with a column per parameter first."""
    names = _names(entries)
    columns = [*names, "comparison_id", "name", *[f.name for f in fields(Invocation)]]
    try:
        with open(path, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=columns)
            writer.writeheader()
            for e in entries:
                for inv in e.report.invocations:
                    writer.writerow(csv_row({**e.parameters, "comparison_id": e.report.id,
                                             "name": e.report.names[inv.side], **inv.to_dict()}))
    except OSError as exc:
        raise DuetError(f"cannot write the CSV export to {path}: {exc.strerror}", hint="choose a writable path") from None
