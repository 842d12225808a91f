"""The terminal report (rich): per-side summaries, the ratio with its CI, the verdict in plain words."""
from __future__ import annotations

import statistics

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from duetbench.analyze.verdicts import describe_change
from duetbench.report.model import ComparisonReport, cpus_per_command, runs_measured, stopped_by
from duetbench.report.units import ci_width, fmt_time, p_value
from duetbench.report.wide import print_table

_VERDICT_STYLE = {"slower": "bold red", "faster": "bold green", "no difference": "bold"}


_INTERVAL_NAMES = {"bootstrap": "percentile bootstrap", "anytime": "anytime-valid",
                   "t-stopped": "t at α/2 for the adaptive stop"}
_STOPS = {
    "precision": "the CI reached --target-width",
    "stability": "both sides' runs were stable (--run-criterion)",
    "evidence": "a difference was evident (anytime-valid confidence sequence); its CI is that sequence, valid "
                "at a stop chosen by looking at the data, so wider than a fixed-n CI (--no-stop-on-evidence: off)",
}


def _cpus(report: ComparisonReport) -> str:
    """The header's mention of --cpus-per-command where a command was given more than one CPU."""
    per_command = cpus_per_command(report.options)
    return f" · {per_command} CPUs per command" if per_command > 1 else ""


def _command(command: str, label: str) -> str:
    """A command as the header shows it after "  {label}: " (`label` as printed, unescaped): a script of
    several lines (`duet compare $'make\\n./bench'`, run through sh -c) keeps its lines, each under the
    first, where it read as a line of the report's own."""
    return escape(command.rstrip("\n")).replace("\n", "\n" + " " * (2 + cell_len(label) + 2))


def render(report: ComparisonReport, console: Console, time_unit: str | None = None) -> None:
    if report.method == "single":
        render_single(report, console, time_unit)
        return
    # Names, commands and what quotes them are the user's text, printed as it is: a "[/x]" in a command was
    # read as a closing markup tag (a traceback instead of the report), a "[bold]" styled what followed.
    names = {side: escape(name) for side, name in report.names.items()}
    _ms = lambda seconds: fmt_time(seconds, time_unit)  # noqa: E731
    first = next(iter(report.results.values()), None)
    runs = f" · {runs_measured(first)}" if first else ""
    console.print(f"[bold]duet compare #{report.id}[/bold] · method [cyan]{report.method}[/cyan]{runs}"
                  f"{_cpus(report)} · seed {report.seed} · {report.status}")
    auto = report.options.get("auto")
    if isinstance(auto, dict) and auto.get("reason"):
        for earlier in auto.get("history", [])[:-1]:
            console.print(f"  [dim]method auto → {earlier['reason']}[/dim]", soft_wrap=True)
        if len(auto.get("history", [])) > 1:
            console.print(f"  [bold]conditions changed after {auto['history'][-1]['after_runs']} runs[/bold]: "
                          "the runs spread so much that the other method might be more precise, so both were "
                          "tried again", soft_wrap=True)
        console.print(f"  [bold]method auto[/bold] → {auto['reason']}", soft_wrap=True)
        if auto.get("cpu_hint"):
            console.print(f"  [yellow]note:[/yellow] {auto['cpu_hint']}", soft_wrap=True)
    for side in ("A", "B"):
        label = side if names[side] == side else f"{side} ({names[side]})"
        plain = side if report.names[side] == side else f"{side} ({report.names[side]})"
        console.print(f"  [bold]{label}[/bold]: {_command(report.commands[side], plain)}", soft_wrap=True)
    if not report.results:  # a table of names alone says nothing; why there are no numbers does
        _no_statistics(report, console)
        return
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
    print_table(console, table)
    primary = report.primary
    if primary is not None:
        ranges = " · ".join(f"{names[side]} {_ms(s.min)} … {_ms(s.max)}"
                            for side, s in (("A", primary.a), ("B", primary.b)))
        console.print(f"  Range (min … max): {ranges}  [dim]({primary.metric}, {runs_measured(primary)})[/dim]",
                      soft_wrap=True)
    for metric, result in report.results.items():
        marker = "▶" if metric == report.primary_metric else " "
        text = escape(describe_change(result.ratio, report.names["A"], report.names["B"]))
        style = _VERDICT_STYLE.get(result.verdict, "") if metric == report.primary_metric else "dim"
        extra = f"U-test p = {p_value(result.u_test_p)}, CI width {ci_width(result.relative_ci_width)}"
        if result.outliers_removed:
            extra += f", {result.outliers_removed} outlier pair(s) set aside"
        if result.ratio.interval != "t":
            extra += f", {_INTERVAL_NAMES.get(result.ratio.interval, result.ratio.interval)} CI"
        console.print(f"{marker} {metric:>4}: [{style}]{text}[/{style}]  [dim]({extra})[/dim]", soft_wrap=True)
    stopped = report.options.get("stopped_by")
    if stopped in _STOPS:
        console.print(f"[dim]stopped: {_STOPS[stopped]}[/dim]", soft_wrap=True)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")


def _no_statistics(report: ComparisonReport, console: Console) -> None:
    """Why a stored comparison has no numbers (`duet show` of one a failing command ended), its warnings."""
    ended = stopped_by(report)
    console.print(f"[yellow]No statistics: {escape(report.analysis_error or 'no run finished')}"
                  f"{escape(f'; {ended}') if ended else ''}[/yellow]", soft_wrap=True)
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")


def render_single(report: ComparisonReport, console: Console, time_unit: str | None = None) -> None:
    """One command benchmarked on its own: mean ± σ, Range (min … max), CPU time, the mean's CI, and its
    noise as a comparison of it with itself would see it."""
    b = report.benchmark
    runs = f" · {b.runs} runs" if b is not None else ""
    console.print(f"[bold]duet compare #{report.id}[/bold] · one command{runs}{_cpus(report)} · seed {report.seed} · "
                  f"{report.status}")
    name = report.names["A"]
    label = "Benchmark" if name == "A" else f"Benchmark ({escape(name)})"
    plain = "Benchmark" if name == "A" else f"Benchmark ({name})"
    console.print(f"  [bold]{label}[/bold]: {_command(report.commands['A'], plain)}", soft_wrap=True)
    if b is None:
        _no_statistics(report, console)
        return
    t = lambda seconds: fmt_time(seconds, time_unit)  # noqa: E731
    sd = t(b.stdev) if b.stdev == b.stdev else "–"
    metric = "" if b.metric == "wall" else f" [dim]({b.metric} time)[/dim]"
    console.print(f"  Time (mean ± σ):     [bold]{t(b.mean)}[/bold] ± {sd}{metric}    "
                  f"[dim][User: {t(b.user)}, System: {t(b.system)}][/dim]", soft_wrap=True)
    console.print(f"  Range (min … max):   {t(b.min)} … {t(b.max)}    [dim]{b.runs} runs[/dim]", soft_wrap=True)
    if b.low == b.low:
        console.print(f"  Mean, {b.confidence * 100:g}% CI:        {t(b.low)} … {t(b.high)} "
                      f"[dim](± {b.relative_half_width:.2%})[/dim]", soft_wrap=True)
    if b.aa_resolution == b.aa_resolution:
        console.print(f"  Noise:               CV {b.cv:.2%}; compared with itself at {b.runs} runs each, "
                      f"a comparison would resolve about ±{b.aa_resolution:.2%}", soft_wrap=True)
    stopped = report.options.get("stopped_by")
    if stopped == "precision":
        console.print("[dim]stopped: the mean's CI reached --target-width[/dim]")
    for warning in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(warning)}")
