"""The terminal report (rich): per-side summaries, the ratio with its CI, the verdict in plain words."""
from __future__ import annotations

import statistics

from rich.console import Console
from rich.table import Table

from duetbench.analyze.verdict import describe_change
from duetbench.report.model import ComparisonReport

_VERDICT_STYLE = {"slower": "bold red", "faster": "bold green", "no difference": "bold"}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms" if seconds < 10 else f"{seconds:.3f} s"


def render(report: ComparisonReport, console: Console) -> None:
    names = report.names
    console.print(f"[bold]duet compare[/bold] #{report.id} · method [cyan]{report.method}[/cyan] · "
                  f"seed {report.seed} · status {report.status}")
    table = Table(show_edge=False, header_style="bold")
    table.add_column("")
    table.add_column("runs", justify="right")
    for metric in report.results:
        table.add_column(f"{metric} mean ± σ", justify="right")
        table.add_column(f"{metric} median", justify="right")
    table.add_column("range (wall)", justify="right")
    table.add_column("max RSS", justify="right")
    for side, key in (("A", "a"), ("B", "b")):
        row = [f"[bold]{names[side]}[/bold]: {report.commands[side]}"]
        first = next(iter(report.results.values()), None)
        row.append(str(getattr(first, key).n) if first else "0")
        for result in report.results.values():
            s = getattr(result, key)
            row += [f"{_ms(s.mean)} ± {_ms(s.stdev) if s.stdev == s.stdev else '–'}", _ms(s.median)]
        wall = report.results.get("wall")
        row.append(f"{_ms(getattr(wall, key).min)} … {_ms(getattr(wall, key).max)}" if wall else "")
        rss = [i.maxrss_kb for i in report.invocations if i.side == side and not i.warmup and i.ok]
        row.append(f"{statistics.median(rss) / 1024:.1f} MiB" if rss else "")
        table.add_row(*row)
    console.print(table)
    for metric, result in report.results.items():
        marker = "▶" if metric == report.primary_metric else " "
        text = describe_change(result.ratio, names["A"], names["B"])
        style = _VERDICT_STYLE.get(result.verdict, "") if metric == report.primary_metric else "dim"
        extra = f"U-test p = {result.u_test_p:.3g}, rel. CI width {result.relative_ci_width:.2%}"
        if result.outliers_removed:
            extra += f", {result.outliers_removed} outlier pair(s) set aside"
        console.print(f"{marker} {metric:>4}: [{style}]{text}[/{style}]  [dim]({extra})[/dim]")
    if report.analysis_error:
        console.print(f"[yellow]No statistics: {report.analysis_error}[/yellow]")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
