"""``duet compare -P/-L``: a parameter scan, one stored comparison per combination of values."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from duetbench.config.compare import CompareOptions, command_argv, validated
from duetbench.config.scan import substitute, unused
from duetbench.errors import DuetError
from duetbench.report.exporters import Exports
from duetbench.report.scan import render_scan, sorted_entries
from duetbench.usecases.series import Step, run_series, series_export

#: Options whose text may hold {name} placeholders.
_TEXT = ("command_a", "command_b", "name_a", "name_b")
_LISTS = ("prepare", "conclude", "setup", "cleanup")


def plan_scan(base: dict[str, Any], grid: list[dict[str, str]]) -> list[CompareOptions]:
    """Every comparison's options, validated and with its commands found, before anything is measured:
    a bad value in the last combination should not cost the time of the first ones."""
    templates = [base["command_a"], base.get("command_b") or "", *(c for key in _LISTS for c in base[key])]
    missing = unused(grid[0], templates)
    if missing:
        raise DuetError(f"parameter {{{missing[0]}}} appears in neither command nor prepare/conclude/setup/cleanup",
                        hint=f"write {{{missing[0]}}} where its value goes, e.g. 'sort -n data-{{{missing[0]}}}.txt'")
    planned = []
    for values in grid:
        kwargs = {**base, "parameters": values}
        for key in _TEXT:
            if base.get(key) is not None:  # command_b is None when one command is benchmarked
                kwargs[key] = substitute(base[key], values)
        for key in _LISTS:
            kwargs[key] = [substitute(c, values) for c in base[key]]
        opts = validated(**kwargs)
        for side, command in (("A", opts.command_a), ("B", opts.command_b)):
            if command is not None:
                command_argv(command, shell=opts.shell, side=side)
        planned.append(opts)
    return planned


def run_scan(base: dict[str, Any], grid: list[dict[str, str]], *, db_path: Path, exports: Exports,
             console: Console, show_progress: bool = True, time_unit: str | None = None,
             sort: str = "auto") -> int:
    """Run the comparisons (or, with one command, its benchmarks) one after another, then the scan's table
    (in the order they ran, or by time with --sort mean-time, as its Markdown/AsciiDoc/Org tables). Exports,
    exit code, Ctrl-C: those of every series (usecases/series.py)."""
    planned = plan_scan(base, grid)
    steps = [Step(opts, ", ".join(f"{name} = {value}" for name, value in opts.parameters.items()), opts.parameters)
             for opts in planned]
    return run_series(steps, db_path=db_path, console=console, show_progress=show_progress, time_unit=time_unit,
                      export=series_export(exports, sort),
                      summarize=lambda entries: render_scan(sorted_entries(entries, sort), console, len(planned),
                                                            time_unit=time_unit))
