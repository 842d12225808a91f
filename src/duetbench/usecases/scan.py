"""``duet compare -P/-L``: a parameter scan, one stored comparison per combination of values."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from duetbench.config.compare import CompareOptions, command_argv, validated
from duetbench.config.scan import substitute, unused
from duetbench.errors import DuetError
from duetbench.report.exporters import Exports
from duetbench.report.model import ComparisonReport, ScanEntry, ScanReport
from duetbench.report.scan import render_scan
from duetbench.usecases.compare import run_compare

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
             console: Console, show_progress: bool = True, time_unit: str | None = None) -> int:
    """Run the comparisons (or, with one command, its benchmarks) one after another, then the scan's table.
    The exports are rewritten after every comparison, so that they hold what finished even if the scan is
    killed, and at the end (also after a failure or Ctrl-C: what finished is shown and kept). Exit code: 130
    interrupted, EXIT_SLOWER if any comparison tripped --fail-if-slower, else 0; a failing command ends
    the scan with its error, as in one comparison."""
    planned = plan_scan(base, grid)
    entries: list[ScanEntry] = []
    code = 0
    try:
        for k, opts in enumerate(planned, 1):
            label = ", ".join(f"{name} = {value}" for name, value in opts.parameters.items())
            console.rule(escape(f"{k}/{len(planned)}: {label}"))
            rc = run_compare(opts, db_path=db_path, exports=Exports(), console=console, show_progress=show_progress,
                             on_report=_collect(entries, opts.parameters), time_unit=time_unit)
            if k < len(planned):
                exports.write(ScanReport(entries))
            if rc == 130:
                return 130
            code = max(code, rc)
        return code
    finally:
        console.rule()
        render_scan(entries, console, len(planned), time_unit=time_unit)
        exports.write(ScanReport(entries))


def _collect(entries: list[ScanEntry], parameters: dict[str, str]) -> Callable[[ComparisonReport], None]:
    return lambda report: entries.append(ScanEntry(parameters, report))
