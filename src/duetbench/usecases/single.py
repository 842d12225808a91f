"""``duet compare CMD``: one command benchmarked on its own, as ``hyperfine CMD``.

Sequential runs on one pinned CPU, stopped adaptively once the t interval of its mean (made at α/2 for
the look) is --target-width narrow, else by --runs, --max-runs or --time-budget; stored as a comparison
of method "single" with command A only, so `duet show` and the exports find it like any other."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from duetbench import __version__
from duetbench.config.compare import CompareOptions, command_argv, hook_shell
from duetbench.execute.lock import MeasurementLock
from duetbench.execute.meanwhile import import_modules
from duetbench.execute.runner import Runner, RunSettings, run_shell
from duetbench.host.host import host_facts, usable_cpus
from duetbench.model.invocation import Invocation, usable
from duetbench.report.exporters import Exports
from duetbench.report.model import ComparisonReport
from duetbench.report.progress import LiveProgress

if TYPE_CHECKING:
    from rich.console import Console

    from duetbench.analyze.single import Benchmark

#: The method a one-command benchmark is stored with.
SINGLE = "single"

#: What a single command's benchmark imports once it has measured, imported while its warm-up runs
#: instead (as `usecases.compare.AFTER_MEASURING`).
AFTER_MEASURING = ("duetbench.analyze.single", "duetbench.analyze.invocations",
                   "duetbench.report.terminal", "duetbench.store.direct")


def runs_of(invocations: list[Invocation], metric: str) -> tuple[list[float], list[float], list[float]]:
    """The usable measured runs' times in `metric`, user and system CPU seconds."""
    from duetbench.analyze.invocations import usable

    runs = [i for i in usable(invocations) if i.side == "A"]
    return ([i.wall_s if metric == "wall" else i.cpu_s for i in runs], [i.user_s for i in runs],
            [i.sys_s for i in runs])


def benchmark_of(invocations: list[Invocation], metric: str, confidence: float) -> Benchmark | None:
    """The command's Benchmark (analyze/single.py), or None without a usable run."""
    from duetbench.analyze.single import summarize

    times, user, system = runs_of(invocations, metric)
    return summarize(metric, times, user, system, confidence) if times else None


def _stop_rule(opts: CompareOptions, on_progress: Callable[[int, str], None], stopped: list[str]
               ) -> Callable[[list[Invocation], float], bool]:
    from duetbench.analyze.looks import LookSchedule

    looks = LookSchedule(opts.min_runs)

    def should_continue(measured: list[Invocation], elapsed: float) -> bool:
        from duetbench.analyze.single import mean_interval, precise_enough

        times = runs_of(measured, opts.metric)[0]
        n = len(times)
        text = ""
        if n >= 2:
            mean, low, high = mean_interval(times, opts.confidence)
            text = f"mean {mean * 1000:.3f} ms ± {(high - low) / 2 / mean:.2%}"
        on_progress(n, text)
        if opts.runs is not None:
            return n < opts.runs
        if n < opts.min_runs:
            return True
        if n >= opts.max_runs or elapsed >= opts.time_budget:
            return False
        if looks.due(n) and precise_enough(times, opts.target_rciw, opts.confidence):
            stopped.append("precision")
            return False
        return True

    return should_continue


def run_single(opts: CompareOptions, *, db_path: Path, exports: Exports, console: Console, show_progress: bool = True,
               time_unit: str | None = None, on_report: Callable[[ComparisonReport], None] | None = None) -> int:
    """Measure, store and report one command; the exit code (0, or 130 when interrupted; a failing
    command raises its error after the report)."""
    from duetbench.usecases.compare import (
        _DeferredComparison,
        _with_owner,
        kept_before,
        placement_of,
        report_stored,
    )
    from duetbench.usecases.measuring import Failures, guarded

    argv, note = command_argv(opts.command_a, shell=opts.shell, side=opts.name_a)
    if note:
        console.print(f"[yellow]note:[/yellow] {_escape(note)}", soft_wrap=True)
    # Where a sequential comparison measures (the second side's CPUs where a duet is possible), so one
    # command is measured where it would be in a comparison.
    placement = placement_of(opts, usable_cpus())
    cpu = placement.cpus[1]
    options: dict[str, Any] = opts.model_dump()
    options["cpus_per_command"] = placement.per_command
    options["stopped_by"] = None
    lock = MeasurementLock(f"duet compare {opts.command_a!r}")
    lock.acquire()
    comparison = _DeferredComparison(db_path, lambda store: store.begin_comparison(
        method=SINGLE, name_a=opts.name_a, name_b="", command_a=opts.command_a, command_b="", seed=opts.seed,
        options=_with_owner(options), host=host_facts(), tool_version=__version__))
    progress = LiveProgress(console, opts.runs or opts.min_runs, show_progress)
    total = opts.runs or opts.min_runs

    def on_progress(n: int, text: str) -> None:
        nonlocal total
        total = max(total, n + (0 if opts.runs else 1))
        progress.update(done=n, total=total, description=f"benchmark {opts.name_a}", ci=text)

    stopped: list[str] = []
    settings = RunSettings(method="sequential", argv={"A": argv}, cpus=(cpu, cpu), cpu_sets=placement.cpu_sets,
                           seed=opts.seed, warmup=opts.warmup,
                           timeout_s=opts.timeout, prepare={"A": opts.per_side(opts.prepare)["A"]},
                           conclude={"A": opts.per_side(opts.conclude)["A"]}, ignore_failure=opts.ignore_failure,
                           ignore_exit_codes=frozenset(opts.ignore_exit_codes),
                           show_output=opts.show_output, output={"A": opts.per_side(opts.output)["A"] or "null"},
                           input_path=opts.input, labels={"A": opts.name_a}, hook_shell=hook_shell(opts.shell),
                           during_warmup=import_modules(AFTER_MEASURING))
    status, failure = "failed", None

    def finish(failures: Failures) -> None:
        if stopped:
            options["stopped_by"] = stopped[0]
        comparison.open().finish_comparison(comparison.id, status if failures.shell is None else "failed", options)

    with guarded(lambda: comparison.id >= 0, finish, lock) as failures, progress:
        setup, cleanup = opts.per_side(opts.setup)["A"], opts.per_side(opts.cleanup)["A"]
        if setup:
            run_shell(setup, "--setup", settings.hook_shell)
        runner = Runner(settings, _stop_rule(opts, on_progress, stopped), comparison.add_invocation,
                        on_activity=comparison.set_activity, on_invocations=comparison.add_invocations)
        try:
            outcome = runner.run()
            status, failure = outcome.status, outcome.failure
        except KeyboardInterrupt:
            runner.stop_all()
            status = "interrupted"
        if cleanup and status != "interrupted":
            run_shell(cleanup, "--cleanup", settings.hook_shell)
    if failures.store is not None:
        raise kept_before(failures.store, comparison, lambda invs: len(usable(invs)),
                          db_path=db_path, exports=exports, console=console, time_unit=time_unit,
                          on_report=on_report)
    report_stored(comparison, status, failure, failures.shell, exports=exports, console=console,
                  time_unit=time_unit, on_report=on_report)
    return 130 if status == "interrupted" else 0


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
