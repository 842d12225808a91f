"""Several comparisons one after another, as ``duet compare A B C`` (usecases/many.py) and a parameter
scan ``-P/-L`` (usecases/scan.py) run them: the one loop both share, with its summary, its exports kept
up to date, its exit code and its handling of Ctrl-C and SIGTERM."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rich.console import Console
from rich.markup import escape

from duetbench.config.compare import CompareOptions
from duetbench.report.exporters import Exports
from duetbench.report.model import ComparisonReport, ScanEntry, ScanReport
from duetbench.report.scan import sorted_entries
from duetbench.usecases.compare import run_compare
from duetbench.usecases.interrupts import restore, stop_like_ctrl_c


@dataclass(frozen=True)
class Step:
    """One planned comparison of a series."""

    options: CompareOptions
    #: Shown in the rule above its report: "3/5: n = 100", "2/3: x against base".
    title: str
    #: Its entry's key in the series' exports and summary: the scan's values, or {"command": name}.
    parameters: dict[str, str]


#: The formats whose tables --sort mean-time orders, as hyperfine's --sort orders its markup tables; the
#: others (JSON, CSV, hyperfine's JSON, HTML) keep the order the comparisons ran in, which tools reading them
#: may rely on.
TABLE_FORMATS = ("markdown", "asciidoc", "orgmode")


class SeriesExport(Protocol):
    """What `run_series` calls to export the comparisons finished so far: the files (`files`), the exports
    to standard output (`printed`)."""

    def __call__(self, entries: list[ScanEntry], *, files: bool, printed: bool) -> None: ...


def series_export(exports: Exports, sort: str) -> SeriesExport:
    """Every requested file written as a scan, the tables of TABLE_FORMATS in the order of --sort."""
    if sort != "mean-time":
        return lambda entries, *, files, printed: exports.write(ScanReport(entries), files=files, printed=printed)
    tables = Exports({name: path for name, path in exports.paths.items() if name in TABLE_FORMATS})
    others = Exports({name: path for name, path in exports.paths.items() if name not in TABLE_FORMATS})

    def write(entries: list[ScanEntry], *, files: bool, printed: bool) -> None:
        others.write(ScanReport(entries), files=files, printed=printed)
        tables.write(ScanReport(sorted_entries(entries, sort)), files=files, printed=printed)

    return write


def run_series(steps: list[Step], *, db_path: Path, export: SeriesExport,
               summarize: Callable[[list[ScanEntry]], None], console: Console, show_progress: bool = True,
               time_unit: str | None = None) -> int:
    """Run every step's comparison in order, then `summarize` what finished. `export` is given the
    finished comparisons as soon as each one has its report, so that the exports (each replaced
    atomically, report/exporters) hold everything finished even when the process is killed (SIGKILL)
    in the middle of the next one; a series that ends before any comparison finished exports an empty one.
    Ctrl-C or SIGTERM anywhere in the series (not only while measuring) stops it: the comparison under way
    is kept as interrupted, the summary and the exports show what finished.

    Exit code: 130 interrupted; EXIT_SLOWER if any comparison tripped --fail-if-slower; else 0. A failing
    command ends the series with its error (after the summary and the exports), as in one comparison."""
    entries: list[ScanEntry] = []
    exported = -1  # how many entries the exports hold (-1: none written yet, not even an empty series)

    def export_finished() -> None:
        nonlocal exported
        export(entries, files=True, printed=False)  # what goes to standard output follows the summary, once
        exported = len(entries)

    code = 0
    # SIGTERM (a CI job's timeout, kill) between two comparisons would otherwise end the process at once,
    # without the summary and the final export; run_compare treats it as Ctrl-C while it measures.
    previous = stop_like_ctrl_c()
    try:
        for k, step in enumerate(steps, 1):
            console.rule(escape(f"{k}/{len(steps)}: {step.title}"))

            def keep(report: ComparisonReport, parameters: dict[str, str] = step.parameters) -> None:
                entries.append(ScanEntry(parameters, report))
                # Here, not after run_compare returns: a failing command raises from it after handing over
                # its report, and that report belongs in the exports too.
                export_finished()

            rc = run_compare(step.options, db_path=db_path, exports=Exports(), console=console,
                             show_progress=show_progress, on_report=keep, time_unit=time_unit)
            if rc == 130:
                return 130
            code = max(code, rc)
        return code
    finally:
        try:
            console.rule()
            summarize(entries)
            if exported != len(entries):
                export_finished()
            export(entries, files=False, printed=True)
        finally:
            restore(previous)
