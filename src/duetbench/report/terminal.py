"""The terminal report (rich): per-side summaries, the ratio with its CI, the verdict in plain words."""
from __future__ import annotations

import statistics

from rich.console import Console
from rich.table import Table

from duetbench.analyze.verdict import describe_change
from duetbench.report.model import ComparisonReport

_VERDICT_STYLE = {"slower": "bold red", "faster": "bold green", "no difference": "bold"}


_INTERVAL_NAMES = {"bootstrap": "percentile bootstrap", "anytime": "anytime-valid",
                   "t-stopped": "t at α/2 for the adaptive stop"}
_STOPS = {
    "precision": "the CI reached --target-width",
    "stability": "both sides' runs were stable (--run-criterion)",
    "evidence": "a difference was evident (anytime-valid confidence sequence); its CI is that sequence, valid "
                "at a stop chosen by looking at the data, so wider than a fixed-n CI (--no-stop-on-evidence: off)",
}


def _ms(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.2f} ms"
    return f"{seconds:.3f} s"


def render(report: ComparisonReport, console: Console) -> None:
    names = report.names
    first = next(iter(report.results.values()), None)
    runs = f" · {first.runs} runs" if first else ""
    console.print(f"[bold]duet compare #{report.id}[/bold] · method [cyan]{report.method}[/cyan]{runs} · "
                  f"seed {report.seed} · {report.status}")
    auto = report.options.get("auto")
    if isinstance(auto, dict) and auto.get("reason"):
        for earlier in auto.get("history", [])[:-1]:
            console.print(f"  [dim]method auto → {earlier['reason']}[/dim]", soft_wrap=True)
        if len(auto.get("history", [])) > 1:
            console.print(f"  [bold]conditions changed after {auto['history'][-1]['after_runs']} runs[/bold]: "
                          "the runs spread far more than in the pilot, so both methods were tried again",
                          soft_wrap=True)
        console.print(f"  [bold]method auto[/bold] → {auto['reason']}", soft_wrap=True)
        if auto.get("cpu_hint"):
            console.print(f"  [yellow]note:[/yellow] {auto['cpu_hint']}", soft_wrap=True)
    for side in ("A", "B"):
        label = side if names[side] == side else f"{side} ({names[side]})"
        console.print(f"  [bold]{label}[/bold]: {report.commands[side]}", soft_wrap=True)
    table = Table(show_edge=False, header_style="bold", box=None, padding=(0, 1))
    table.add_column("")
    for metric in report.results:
        table.add_column(f"{metric} mean", justify="right")
        table.add_column("median", justify="right")
        table.add_column("CV", justify="right")
    table.add_column("max RSS", justify="right")
    for side, key in (("A", "a"), ("B", "b")):
        row = [f"[bold]{names[side]}[/bold]"]
        for result in report.results.values():
            s = getattr(result, key)
            row += [_ms(s.mean), _ms(s.median), f"{s.cv:.1%}" if s.cv == s.cv else "–"]
        rss = [i.maxrss_kb for i in report.invocations if i.side == side and not i.warmup and i.ok]
        row.append(f"{statistics.median(rss) / 1024:.1f} MiB" if rss else "")
        table.add_row(*row)
    console.print(table)
    for metric, result in report.results.items():
        marker = "▶" if metric == report.primary_metric else " "
        text = describe_change(result.ratio, names["A"], names["B"])
        style = _VERDICT_STYLE.get(result.verdict, "") if metric == report.primary_metric else "dim"
        extra = f"U-test p = {result.u_test_p:.2g}, CI width {result.relative_ci_width:.2%}"
        if result.outliers_removed:
            extra += f", {result.outliers_removed} outlier pair(s) set aside"
        if result.ratio.interval != "t":
            extra += f", {_INTERVAL_NAMES.get(result.ratio.interval, result.ratio.interval)} CI"
        console.print(f"{marker} {metric:>4}: [{style}]{text}[/{style}]  [dim]({extra})[/dim]", soft_wrap=True)
    stopped = report.options.get("stopped_by")
    if stopped in _STOPS:
        console.print(f"[dim]stopped: {_STOPS[stopped]}[/dim]", soft_wrap=True)
    if report.analysis_error:
        console.print(f"[yellow]No statistics: {report.analysis_error}[/yellow]")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {warning}")
