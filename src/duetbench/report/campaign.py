"""Terminal output of `duet run`: the plan (--dry-run), the live campaign view, the summary table."""
from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from duetbench.analyze.api import AnalysisRow
from duetbench.analyze.ratio import RatioResult
from duetbench.plan.campaign import PlannedRun
from duetbench.report.progress import ManualProgress
from duetbench.report.units import bracketed_interval, ci_width, p_value
from duetbench.report.wide import print_table

#: Runs the plan's table shows: a campaign may plan millions (1 000 000 per method and benchmark), which rich
#: would take hours and gigabytes to lay out.
PLAN_ROWS = 1000


def print_plan(console: Console, name: str, seed: int, schedule: str, plan: list[PlannedRun],
               commands: dict[tuple[str, str], str], done: set[str] | None = None) -> None:
    done = done or set()
    table = Table(title=f"campaign {name}: {len(plan)} runs, schedule {schedule}, seed {seed}", title_justify="left")
    for column in ("#", "benchmark", "method", "rep", "launch order", "CPUs", "state"):
        table.add_column(column, justify="right" if column in ("#", "rep") else "left")
    for run in plan[:PLAN_ROWS]:
        cpus = " ".join(f"{s}→{run.cpus[s]}" for s in run.sides)
        table.add_row(str(run.position + 1), escape(run.benchmark), run.method, str(run.repetition),
                      "".join(run.sides), cpus, "done" if run.key in done else "")
    print_table(console, table)
    if len(plan) > PLAN_ROWS:
        left = len(plan) - PLAN_ROWS
        console.print(f"  ... and {left} more runs, not shown ({sum(r.key in done for r in plan[PLAN_ROWS:])} of "
                      "them done)" if done else f"  ... and {left} more runs, not shown", highlight=False)
    for (bench, side), command in sorted(commands.items()):
        console.print(f"  [bold]{escape(bench)}[/bold] {side}: {escape(command)}", soft_wrap=True, highlight=False)


class CampaignProgress(ManualProgress):
    """Runs done and left, ETA, current benchmark and method, failures so far.

    Refreshed only between runs (auto-refresh off): a refresh thread would wake up during the
    measurement and land on one side of a duet. Without a terminal, one plain line per run.
    """

    def __init__(self, console: Console, total: int, done: int, enabled: bool) -> None:
        super().__init__(console, enabled, [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                            TextColumn("{task.fields[failures]}")],
                         description="starting", total=total, completed=done, failures="")
        self.failures = 0

    def starting(self, run: PlannedRun) -> None:
        self._describe(run)

    def finished(self, run: PlannedRun, status: str, error: str) -> None:
        if status != "ok":
            self.failures += 1
            self.console.print(f"[red]run {escape(run.key)} failed:[/red] {escape(error)}", soft_wrap=True,
                               highlight=False)
        self.progress.advance(self.task)
        self._describe(run)
        self._plain_line(run, status)

    def skipped(self, run: PlannedRun, why: str) -> None:
        self.progress.advance(self.task)
        self.refresh()
        self._plain_line(run, f"skipped ({why})")

    def note(self, text: str) -> None:
        self.console.print(f"[cyan]{escape(text)}[/cyan]", soft_wrap=True, highlight=False)

    def _plain_line(self, run: PlannedRun, state: str) -> None:
        if not self.enabled:
            task = self.progress.tasks[0]
            self.console.print(escape(f"[{int(task.completed)}/{task.total or 0:.0f}] {run.key}: {state}"),
                               highlight=False)

    def _describe(self, run: PlannedRun) -> None:
        fails = f"[red]{self.failures} failed[/red]" if self.failures else ""
        self.progress.update(self.task, description=escape(f"{run.benchmark} · {run.method} {run.repetition}"),
                             failures=fails)
        self.refresh()


U_TEST_NOTE = ("the U test finds A's and B's iterations differently distributed, but the ratio's CI includes 1: "
               "the difference it sees is not a consistent change of time (a shift in a few iterations, or in the "
               "spread), or it is smaller than this interval resolves. The verdict follows the CI.")


def p_contradicts(verdict: str, p: float, confidence_level: float) -> bool:
    """A U-test p below alpha beside "no difference": it reads as a contradiction, so it is explained on the spot."""
    return verdict == "no difference" and p < 1 - confidence_level


def print_summary(console: Console, rows: list[AnalysisRow], confidence_level: float) -> None:
    table = Table(title="B relative to A (ratio of execution times, > 1 means B is slower)", title_justify="left")
    for column in ("benchmark", "method", "runs", "A / B per iteration (median)",
                   f"ratio B/A [{confidence_level * 100:g}% CI]", "verdict", "U-test p", "CI width"):
        table.add_column(column, no_wrap=column.startswith(("ratio", "A / B")))
    problems = []
    p_marks: list[AnalysisRow] = []
    for row in rows:
        runs = runs_column(row, markup=True)
        if row.result is None:
            problems.append(row)
            table.add_row(escape(row.benchmark), row.method, runs, "", f"[yellow]no result ({len(problems)})[/yellow]",
                          "", "", "")
            continue
        r = row.result
        colour = {"slower": "red", "faster": "green"}.get(r.verdict, "white")
        # A tiny U-test p beside "no difference" reads as a contradiction: say on the spot what it means.
        p_mark = ""
        if p_contradicts(r.verdict, r.u_test_p, confidence_level):
            p_marks.append(row)
            p_mark = f" [dim]({'†' * len(p_marks)})[/dim]"
        table.add_row(escape(row.benchmark), row.method, runs, f"{duration(r.a.median)} / {duration(r.b.median)}",
                      format_ratio(r.ratio),
                      f"[{colour}]{r.verdict}[/{colour}]", f"{p_value(r.u_test_p, '.3g')}{p_mark}",
                      ci_width(r.relative_ci_width))
    print_table(console, table)
    # Explanations go below the table: they are sentences, and would wrap into unreadable columns.
    for number, row in enumerate(problems, start=1):
        console.print(f"[yellow]({number})[/yellow] {escape(row.benchmark)} · {row.method}: {escape(row.problem)}",
                      soft_wrap=True, highlight=False)
    for number, row in enumerate(p_marks, start=1):
        console.print(f"[dim]({'†' * number})[/dim] {escape(row.benchmark)} · {row.method}: {U_TEST_NOTE}",
                      soft_wrap=True, highlight=False)
    for row in rows:
        for note in row.notes:
            console.print(f"[dim]note[/dim] {escape(row.benchmark)} · {row.method}: {escape(note)}", soft_wrap=True,
                          highlight=False)


def duration(seconds: float) -> str:
    """A time per iteration with its unit, three significant digits: harness iterations run from
    nanoseconds (JMH's ops) to minutes."""
    if not math.isfinite(seconds):
        return "–"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def runs_column(row: AnalysisRow, *, markup: bool = False) -> str:
    """A campaign row's runs: those finished (`duet run`) or analysed (`duet analyze`), and those that failed
    beside them ("10 +2 failed"), which the analysis never sees."""
    ok = row.runs if row.runs_ok is None else row.runs_ok
    if not row.runs_failed:
        return f"{ok}"
    failed = f"+{row.runs_failed} failed"
    return f"{ok} [red]{failed}[/red]" if markup else f"{ok} {failed}"


def format_ratio(r: RatioResult) -> str:
    return f"{r.estimate:.4f} {bracketed_interval(r.low, r.high)}"
