"""``duet compare A B C ...``: every other command compared against a reference (the first, or
--reference), one stored comparison each with its own verdict, then a summary as hyperfine's
("A ran 1.20 times faster than B")."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from duetbench.config.compare import CompareOptions, command_argv, validated
from duetbench.errors import DuetError
from duetbench.report.exporters import Exports
from duetbench.report.model import ScanEntry, ScanReport
from duetbench.usecases.series import Step, run_series


def plan_many(base: dict[str, Any], commands: list[str], names: list[str], reference: int) -> list[CompareOptions]:
    """One comparison per command other than the reference (A: the reference), all validated, and every
    command checked (found, splittable), before anything is measured."""
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise DuetError(f"two commands are both named {duplicate!r}", hint="give each -n/--command-name once")
    planned = []
    for k, command in enumerate(commands):
        command_argv(command, shell=base.get("shell"), side=names[k])
        if k != reference:
            planned.append(validated(**{**base, "command_a": commands[reference], "command_b": command,
                                        "name_a": names[reference], "name_b": names[k]}))
    return planned


def run_many(base: dict[str, Any], commands: list[str], names: list[str], reference: int, *, db_path: Path,
             exports: Exports, console: Console, show_progress: bool = True, time_unit: str | None = None) -> int:
    """The comparisons one after another, then the summary. Exports, exit code, Ctrl-C: those of every series
    (usecases/series.py); each command's entry in the exports is keyed by its name, as a scan's by its
    parameter values."""
    planned = plan_many(base, commands, names, reference)
    steps = [Step(opts, f"{opts.name_b} against {opts.name_a}", {"command": opts.name_b}) for opts in planned]
    return run_series(steps, db_path=db_path, console=console, show_progress=show_progress, time_unit=time_unit,
                      export=lambda entries: exports.write(ScanReport(entries)),
                      summarize=lambda entries: render_summary(entries, names[reference], console))


def render_summary(entries: list[ScanEntry], reference: str, console: Console) -> None:
    """hyperfine's summary in our terms: how many times faster or slower the reference ran than each
    other command, with the confidence interval of that factor (1/ratio when the reference was slower)."""
    if not entries:
        return
    level = next((e.report.primary.ratio.confidence_level for e in entries if e.report.primary), 0.99)
    metric = entries[0].report.primary_metric
    console.print(f"[bold]Summary[/bold] [dim]({metric} time, {level:.0%} CI)[/dim]")
    console.print(f"  [bold]{escape(reference)}[/bold] ran")
    for e in entries:
        other = escape(e.report.names["B"])
        p = e.report.primary
        if p is None:
            console.print(f"    [yellow]no statistics[/yellow] against {other}")
            continue
        r = p.ratio
        if p.verdict == "slower":  # the other command is slower: the reference ran B/A times faster
            console.print(f"    [green]{r.estimate:.2f}[/green] times faster than {other} "
                          f"[dim](CI {r.low:.3f} … {r.high:.3f})[/dim]")
        elif p.verdict == "faster":
            console.print(f"    [red]{1 / r.estimate:.2f}[/red] times slower than {other} "
                          f"[dim](CI {1 / r.high:.3f} … {1 / r.low:.3f})[/dim]")
        else:
            console.print(f"    as fast as {other}: no difference detected [dim]({other}/{escape(reference)} = "
                          f"{r.estimate:.3f}, CI {r.low:.3f} … {r.high:.3f})[/dim]")
