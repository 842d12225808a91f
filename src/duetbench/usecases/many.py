"""``duet compare A B C ...``: every other command compared against a reference (the first, or
--reference), one stored comparison each with its own verdict, then a summary as hyperfine's
("C ran 1.20 times faster than A", report/speed.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from duetbench.config.compare import CompareOptions, command_argv, pair_options, validated
from duetbench.errors import DuetError
from duetbench.report.exporters import Exports
from duetbench.report.model import ScanEntry
from duetbench.report.speed import RelativeTo, Sort, render_speed_summary, speed_summary
from duetbench.usecases.series import Step, run_series, series_export


def plan_many(base: dict[str, Any], commands: list[str], names: list[str], reference: int) -> list[CompareOptions]:
    """One comparison per command other than the reference (A: the reference), all validated, and every
    command checked (found, splittable), before anything is measured. A per-command option given once per
    command (config.compare.PER_COMMAND, in the order of `commands`) gives each comparison its two commands'."""
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise DuetError(f"two commands are both named {duplicate!r}",
                        hint="give each command a name of its own with -n/--command-name (unnamed ones are A, B, C, "
                             "... by their place)")
    planned = []
    for k, command in enumerate(commands):
        command_argv(command, shell=base.get("shell"), side=names[k])
        if k != reference:
            planned.append(validated(**{**base, "command_a": commands[reference], "command_b": command,
                                        "name_a": names[reference], "name_b": names[k],
                                        **pair_options(base, reference, k)}))
    return planned


def run_many(base: dict[str, Any], commands: list[str], names: list[str], reference: int, *, db_path: Path,
             exports: Exports, console: Console, show_progress: bool = True, time_unit: str | None = None,
             sort: Sort = "auto", relative_to: RelativeTo = "fastest") -> int:
    """The comparisons one after another, then the summary: relative to the fastest command, or (with
    `relative_to` "reference", as after --reference) to the reference, ordered by --sort. Exports, exit code,
    Ctrl-C: those of every series (usecases/series.py); each command's entry in the exports is keyed by
    its name, as a scan's by its parameter values."""
    planned = plan_many(base, commands, names, reference)
    steps = [Step(opts, f"{opts.name_b} against {opts.name_a}", {"command": opts.name_b}) for opts in planned]

    def summarize(entries: list[ScanEntry]) -> None:
        render_speed_summary(speed_summary(entries, names, names[reference], relative_to=relative_to, sort=sort),
                             console)

    return run_series(steps, db_path=db_path, console=console, show_progress=show_progress, time_unit=time_unit,
                      export=series_export(exports, sort), summarize=summarize)
