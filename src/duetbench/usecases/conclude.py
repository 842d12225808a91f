"""The end of a comparison: read back from the store, judged, printed, exported, and its exit code.

Apart from usecases/compare.py (the measuring) so that the process that only reports — the reporter
forked when `duet` starts (usecases/apart.py) — imports neither the runner nor the options' validation:
every module imported before the hand-over is on the reporter's path to being ready (~80 ms of ~380 ms on
a 2-vCPU AMD EPYC VM). numpy, the statistics and the report's rendering are imported on first use.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from duetbench.errors import EXIT_SLOWER, CommandFailed, DuetError, StoreFailed
from duetbench.model.invocation import Invocation, usable
from duetbench.report.error_line import tell
from duetbench.report.exporters import ExportsFailed
from duetbench.report.model import ComparisonReport, cpus_per_command

if TYPE_CHECKING:
    from rich.console import Console

    from duetbench.analyze.comparison import ComparisonResult
    from duetbench.execute.runner import ShellCommandFailed
    from duetbench.report.exporters import Exports
    from duetbench.store.db import Store
    from duetbench.store.direct import DirectStore
    from duetbench.store.records import ComparisonRecord

METRICS = ("wall", "cpu")  # = evaluation.METRICS (tests/test_startup.py)

#: What the end of a comparison imports: imported beside the first warm-up unit by the orchestrator, or by
#: the reporter process while the orchestrator starts. The reporter's also: what unpickling the hand-over
#: (the exports) and reporting need, which it otherwise imported after the last pair (~15 ms here). (Not
#: numpy.ma, which numpy's median and percentile import on first use: analyze/quantile.py `median`.)
REPORT_MODULES = ("duetbench.analyze.invocations", "duetbench.report.terminal",
                  "duetbench.report.warnings", "duetbench.store.direct", "duetbench.report.exporters",
                  "duetbench.report.safe_text", "duetbench.store.orchestrators", "duetbench.report.console")


class ShellFailure(msgspec.Struct):
    """A --setup/--cleanup command that failed (execute.runner.ShellCommandFailed, as plain values)."""

    what: str
    command: str
    code: int
    stderr: str


class Ending(msgspec.Struct):
    """How a measured comparison ended, and what of its options its end needs."""

    status: str
    failure: Invocation | None
    shell_failure: ShellFailure | None
    #: The method measured last (--method auto may have changed it).
    method: str
    name_a: str
    name_b: str
    fail_if_slower: float | None


def evaluate(*args: Any, **kwargs: Any) -> Any:
    from duetbench.analyze.invocations import evaluate as evaluate_

    return evaluate_(*args, **kwargs)


class _RunCounter:
    """``evaluation.measured_runs``, incrementally: the stop rule asks after every pair how many runs
    are complete, and counting them again from the start (into numpy arrays) grew with the runs. The
    runner's list of measured invocations only grows, so only what was appended since is looked at;
    any other list is counted from the start."""

    def __init__(self) -> None:
        self._reset(None, "")

    def _reset(self, invocations: list[Invocation] | None, method: str) -> None:
        self._list = invocations
        self._method = method
        self._seen = 0
        self._sides: dict[int, set[str]] = {}
        self._count = {"A": 0, "B": 0}
        self._pairs = 0

    def __call__(self, method: str, invocations: list[Invocation]) -> int:
        if invocations is not self._list or method != self._method or len(invocations) < self._seen:
            self._reset(invocations, method)
        for inv in usable(invocations[self._seen:]):
            if method == "duet":
                sides = self._sides.setdefault(inv.pair, set())
                before = len(sides)
                sides.add(inv.side)
                self._pairs += before == 1 and len(sides) == 2
            else:
                self._count[inv.side] = self._count.get(inv.side, 0) + 1
        self._seen = len(invocations)
        return self._pairs if method == "duet" else min(self._count["A"], self._count["B"])


measured_runs = _RunCounter()


def exceeds_threshold(*args: Any, **kwargs: Any) -> Any:
    from duetbench.analyze.verdicts import exceeds_threshold as exceeds_threshold_

    return exceeds_threshold_(*args, **kwargs)


def render(*args: Any, **kwargs: Any) -> Any:
    from duetbench.report.terminal import render as render_

    return render_(*args, **kwargs)


def teaching_warnings(*args: Any, **kwargs: Any) -> Any:
    from duetbench.report.warnings import teaching_warnings as teaching_warnings_

    return teaching_warnings_(*args, **kwargs)


class _DeferredComparison:
    """The comparison's record in the store, begun when its first invocation is stored.

    Opening the store through SQLAlchemy imports it and migrates the schema (~0.2 s); deferred to the end
    of the first pair (the warmup pair by default), it does not delay the first invocation. A current
    SQLite database is opened without SQLAlchemy (store/direct.py). Every invocation is still committed
    as soon as it has been measured."""

    def __init__(self, db_path: Path, begin: Callable[[DirectStore | Store], int]) -> None:
        self.db_path = db_path
        self._begin = begin
        self._store: DirectStore | Store | None = None
        self.id = -1

    @classmethod
    def stored(cls, db_path: Path, comparison_id: int) -> _DeferredComparison:
        """A comparison already in the store (begun by another process): `open` does not begin it again."""
        comparison = cls(db_path, lambda store: comparison_id)
        comparison.id = comparison_id
        return comparison

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def open(self) -> DirectStore | Store:
        if self._store is None:
            from duetbench.store.direct import open_comparison_store

            store = open_comparison_store(self.db_path)
            if self.id == -1:  # (opened again after `close`, it is begun already)
                self.id = self._begin(store)
            self._store = store
        return self._store

    def add_invocation(self, inv: Invocation) -> None:
        self.open().add_invocation(self.id, inv)

    def add_invocations(self, invocations: list[Invocation]) -> None:
        self.open().add_invocations(self.id, invocations)

    def set_activity(self, invocations: list[Invocation]) -> None:
        self.open().set_activity(self.id, invocations)


def _names(record: ComparisonRecord) -> dict[str, str]:
    return {"A": record.name_a, "B": record.name_b}


def build_report(record: ComparisonRecord, invocations: list[Invocation], time_unit: str | None = None
                 ) -> ComparisonReport:
    """Judge stored invocations. Deterministic (seeded), so ``duet show`` reprints the same numbers.
    `time_unit` (-u): the unit of the times its warnings name."""
    opts = record.options
    if record.method == "single":
        from duetbench.usecases.single import benchmark_of

        bench = benchmark_of(invocations, opts["metric"], opts["confidence"])
        names = {"A": record.name_a, "B": ""}
        # What applies to one command: failed runs timed, too short, off the CPU, steal, noisy neighbours.
        named = {"A": "The command" if record.name_a == "A" else record.name_a, "B": ""}
        warnings = teaching_warnings(record.method, {}, invocations, names=named,
                                     usable_cpus=len(record.host.get("usable_cpus", [])), time_unit=time_unit,
                                     per_command=cpus_per_command(opts))
        return ComparisonReport(
            id=record.id, status=record.status, method=record.method, names=names,
            commands={"A": record.command_a, "B": ""}, seed=record.seed, options=opts, host=record.host,
            tool_version=record.tool_version, primary_metric=opts["metric"], results={}, invocations=invocations,
            warnings=warnings, analysis_error=None if bench is not None else "no run finished", benchmark=bench)
    results: dict[str, ComparisonResult] = {}
    error = None
    for metric in METRICS if record.method != "auto" else ():
        try:
            # Comparisons stored before intervals were chosen were judged by the bootstrap: keep their numbers.
            results[metric] = evaluate(record.method, invocations, metric, confidence_level=opts["confidence"],
                                       n_resamples=opts["n_resamples"], seed=record.seed,
                                       min_overlap_rate=opts["min_overlap_rate"], robust=opts["robust"],
                                       interval=opts.get("interval", "bootstrap"),
                                       judge_one_sided=bool(opts.get("activity_every_pair")))
        except ValueError as exc:
            error = str(exc)
    report = ComparisonReport(
        id=record.id, status=record.status, method=record.method, names=_names(record),
        commands={"A": record.command_a, "B": record.command_b}, seed=record.seed, options=opts,
        host=record.host, tool_version=record.tool_version, primary_metric=opts["metric"], results=results,
        invocations=invocations, analysis_error=error if not results else None)
    if record.method == "auto":
        pilot = sum(1 for i in invocations if i.side == "A")
        report.analysis_error = (f"it ended during --method auto's pilot: its {pilot} run(s) per side are kept as "
                                 "warm-ups, and no method was chosen yet to judge them by")
    report.warnings = teaching_warnings(record.method, results, invocations, names=report.names,
                                        usable_cpus=len(record.host.get("usable_cpus", [])),
                                        fell_back=bool(opts.get("fell_back_to_sequential")), time_unit=time_unit,
                                        per_command=cpus_per_command(opts))
    return report


def conclude(ending: Ending, comparison: _DeferredComparison, *, db_path: Path, exports: Exports, console: Console,
             time_unit: str | None, on_report: Callable[[ComparisonReport], None] | None) -> int:
    """The end of a measured comparison of two commands: judge and print it, export it; its exit code (or
    the error of the command that ended it)."""
    status, failure, method = ending.status, ending.failure, ending.method
    shell_failure = ending.shell_failure
    comparison_id = comparison.id
    report = report_stored(comparison, status, failure, shell_failure, exports=exports, console=console,
                           time_unit=time_unit, on_report=on_report)
    if status == "interrupted":
        from rich.markup import escape

        from duetbench.store.option import db_argument

        console.print(f"[yellow]Interrupted: {measured_runs(method, report.invocations)} run(s) measured and "
                      f"kept in {escape(str(db_path))} (duet show {comparison_id}{escape(db_argument(db_path))})."
                      "[/yellow]")
        return 130
    primary = report.primary
    if (ending.fail_if_slower is not None and primary is not None
            and exceeds_threshold(primary.ratio, ending.fail_if_slower)):
        console.print(f"[red]{ending.name_b} is more than {ending.fail_if_slower:g}% slower than {ending.name_a} "
                      f"with {primary.ratio.confidence_level * 100:g}% confidence (--fail-if-slower).[/red]")
        return EXIT_SLOWER
    return 0


def report_stored(comparison: _DeferredComparison, status: str, failure: Invocation | None,
                  shell_failure: ShellFailure | ShellCommandFailed | None, *, exports: Exports, console: Console,
                  time_unit: str | None, on_report: Callable[[ComparisonReport], None] | None) -> ComparisonReport:
    """The end of a comparison (two commands or one): read it back from the store, print it (unless nothing
    was measured), export it, hand it to `on_report`, then raise the failure that ended it, if any."""
    store = comparison.open()
    record = store.comparison(comparison.id)
    assert record is not None
    report = build_report(record, store.invocations(comparison.id), time_unit=time_unit)
    report.time_unit = time_unit
    if record.status == "running":
        report.status = status  # its end could not be written (a full disk): say how it ended all the same
    store.close()
    if report.results or report.benchmark is not None or status != "failed":
        render(report, console, time_unit=time_unit)
    unwritten: ExportsFailed | None = None
    try:
        exports.write(report)  # every one it can, whichever fails (the measurements are stored either way)
    except ExportsFailed as exc:
        unwritten = exc
    if on_report is not None:
        on_report(report)
    ended: DuetError | None = None
    if shell_failure is not None:
        ended = DuetError(f"the {shell_failure.what} command failed with exit code {shell_failure.code}: "
                          f"{_last_line(shell_failure.stderr)}", hint="fix the command or run it by hand to see why",
                          exit_code=1)
    elif failure is not None:
        ended = _failure_error(failure, report.names)
    if unwritten is not None:
        if ended is None:
            raise unwritten
        tell(unwritten)  # the error it ends with is the command's, which ended the comparison
    if ended is not None:
        raise ended
    return report


def kept_before(failure: StoreFailed, comparison: _DeferredComparison, runs: Callable[[list[Invocation]], int], *,
                db_path: Path, exports: Exports, console: Console, time_unit: str | None,
                on_report: Callable[[ComparisonReport], None] | None) -> StoreFailed:
    """The results database failed mid-run (a full disk): report the runs stored before it (`runs` counts
    them) where it can still be read, and the error to raise, which names where they are kept."""
    from duetbench.store.option import db_argument

    where = f"duet show {comparison.id}{db_argument(db_path)}"
    try:
        report = report_stored(comparison, "failed", None, None, exports=exports, console=console,
                               time_unit=time_unit, on_report=on_report)
    except StoreFailed:
        kept = f"what was measured before it is kept there ({where} once it can be read)"
    else:
        kept = f"the {runs(report.invocations)} run(s) measured before it are reported above and kept there ({where})"
    return StoreFailed(f"{failure.message}; {kept}", hint=failure.hint, exit_code=failure.exit_code)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no error output)"


def _failure_error(inv: Invocation, names: dict[str, str]) -> DuetError:
    what = f"command {names[inv.side]} {inv.ending()}"
    if inv.status == "failed":
        tail = inv.stderr_tail.strip().replace("\n", " | ")[-300:] or "(no error output)"
        return CommandFailed(f"{what} (invocation {inv.index}): {tail}",
                             hint="fix it, or pass --ignore-failure to time failing runs anyway")
    if inv.status == "timeout":
        return CommandFailed(f"{what} (invocation {inv.index})",
                             hint="raise --timeout, or check the command for a hang")
    if inv.status == "signaled":
        return CommandFailed(f"{what} (invocation {inv.index})",
                             hint="run it by hand to see why, or pass --ignore-failure to time killed runs anyway "
                                  f"(a signal N counts as exit code 128+N: --ignore-failure={inv.exit_code})")
    if "Argument list too long" in (inv.error or ""):  # E2BIG: no method runs it (each adds its offset variable)
        return CommandFailed(what, hint="its arguments and environment together are over this system's limit "
                                        "(getconf ARG_MAX), with up to 4 KiB duet adds: shorten them")
    return CommandFailed(what, hint="check the command, or use --method sequential if the duet set-up is the problem")
