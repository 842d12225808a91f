"""``duet compare`` end to end: config → plan → execute → store → analyze → report."""
from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from duetbench import __version__
from duetbench.analyze.comparison import ComparisonResult
from duetbench.analyze.verdict import exceeds_threshold
from duetbench.config.compare import CompareOptions, split_command
from duetbench.errors import CommandFailed, DuetError
from duetbench.evaluation import METRICS, evaluate, measured_runs, samples
from duetbench.execute.invocation import Invocation
from duetbench.execute.lock import MeasurementLock
from duetbench.execute.runner import Runner, RunSettings, ShellCommandFailed, run_shell
from duetbench.measure.host import host_facts, usable_cpus
from duetbench.plan.schedule import choose_cpus
from duetbench.report.export import Exports
from duetbench.report.model import ComparisonReport
from duetbench.report.progress import LiveProgress
from duetbench.report.terminal import render
from duetbench.report.warnings import teaching_warnings
from duetbench.store.db import ComparisonRecord, Store
from duetbench.store.option import db_argument
from duetbench.store.orchestrators import with_owner

# Live CI estimates use fewer replicates: they only steer stopping and the progress line.
LIVE_RESAMPLES = 2000


def _names(record: ComparisonRecord) -> dict[str, str]:
    return {"A": record.name_a, "B": record.name_b}


def build_report(record: ComparisonRecord, invocations: list[Invocation]) -> ComparisonReport:
    """Judge stored invocations. Deterministic (seeded), so ``duet show`` reprints the same numbers."""
    opts = record.options
    results: dict[str, ComparisonResult] = {}
    error = None
    for metric in METRICS:
        try:
            results[metric] = evaluate(record.method, invocations, metric, confidence_level=opts["confidence"],
                                       n_resamples=opts["n_resamples"], seed=record.seed,
                                       min_overlap_rate=opts["min_overlap_rate"], robust=opts["robust"])
        except ValueError as exc:
            error = str(exc)
    report = ComparisonReport(
        id=record.id, status=record.status, method=record.method, names=_names(record),
        commands={"A": record.command_a, "B": record.command_b}, seed=record.seed, options=opts,
        host=record.host, tool_version=record.tool_version, primary_metric=opts["metric"], results=results,
        invocations=invocations, analysis_error=error if not results else None)
    report.warnings = teaching_warnings(record.method, results, invocations, names=report.names,
                                        usable_cpus=len(record.host.get("usable_cpus", [])),
                                        fell_back=bool(opts.get("fell_back_to_sequential")))
    return report


def _stop_rule(opts: CompareOptions, method: str, on_progress: Callable[[int, str], None], live_ci: bool
               ) -> Callable[[list[Invocation], float], bool]:
    def should_continue(measured: list[Invocation], elapsed: float) -> bool:
        n = measured_runs(method, measured)
        ci_text = ""
        rciw = float("inf")
        # The live CI steers adaptive stopping and the progress line; with neither, don't compute it.
        if n >= 3 and (live_ci or (opts.runs is None and n >= opts.min_runs)):
            try:
                r = evaluate(method, measured, opts.metric, confidence_level=opts.confidence,
                             n_resamples=LIVE_RESAMPLES, seed=opts.seed, min_overlap_rate=opts.min_overlap_rate,
                             robust=opts.robust, u_test=False)
                rciw = r.relative_ci_width
                ci_text = (f"B/A {r.ratio.estimate:.4f} [{r.ratio.low:.4f}, {r.ratio.high:.4f}] "
                           f"width {rciw:.2%}")
            except ValueError:
                pass
        on_progress(n, ci_text)
        if opts.runs is not None:
            return n < opts.runs
        if n < opts.min_runs:
            return True
        if n >= opts.max_runs or elapsed >= opts.time_budget:
            return False
        # Stop on precision, never on significance: stopping when a difference first looks significant
        # inflates false alarms (DESIGN §4, Laaber et al. seed 001).
        if rciw <= opts.target_rciw:
            return False
        return not (opts.run_criterion is not None and _runs_stable(opts, method, measured))

    return should_continue


def _runs_stable(opts: CompareOptions, method: str, measured: list[Invocation]) -> bool:
    """Run stopping of seed 001 §4.2.2 on each side's invocations (one value per run), for the pair."""
    from duetbench.analyze.stopping import StoppingParams, pair_run_stop

    s = samples(method, measured, opts.metric)
    if min(s.a.size, s.b.size) < 2:
        return False
    params = StoppingParams(criterion=opts.run_criterion or "cv", f_min=opts.min_runs, f_max=opts.max_runs)
    decision = pair_run_stop([[v] for v in s.a], [[v] for v in s.b], params, live=True)
    return decision.stop and decision.stable


def run_compare(opts: CompareOptions, *, db_path: Path, exports: Exports, console: Console,
                show_progress: bool = True, on_report: Callable[[ComparisonReport], None] | None = None) -> int:
    """Measure, store, judge and report one comparison; the exit code. `on_report` gets the report
    before any failure is raised (a parameter scan collects its comparisons so)."""
    argv = {"A": split_command(opts.command_a, shell=opts.shell, side="A"),
            "B": split_command(opts.command_b, shell=opts.shell, side="B")}
    host = host_facts()
    cpus_available = usable_cpus()
    cpus = choose_cpus(cpus_available)
    method = opts.method
    options = opts.model_dump()
    if cpus is None:
        cpus = (cpus_available[0], cpus_available[0])
        if method != "sequential":
            method = "sequential"
            options["fell_back_to_sequential"] = True
    lock = MeasurementLock(f"duet compare {opts.command_a!r} {opts.command_b!r}")
    lock.acquire()
    store = Store(db_path)

    comparison_id = store.begin_comparison(
        method=method, name_a=opts.name_a, name_b=opts.name_b, command_a=opts.command_a,
        command_b=opts.command_b, seed=opts.seed, options=with_owner(options), host=host, tool_version=__version__)

    total = opts.runs or opts.min_runs
    progress = LiveProgress(console, total, show_progress)

    def on_progress(n: int, ci: str) -> None:
        nonlocal total
        total = max(total, n + (0 if opts.runs else 1))
        progress.update(done=n, total=total, description=f"{method} {opts.name_a} vs {opts.name_b}", ci=ci)

    settings = RunSettings(method=method, argv=argv, cpus=cpus, seed=opts.seed, warmup=opts.warmup,
                           timeout_s=opts.timeout, prepare=opts.per_side(opts.prepare), conclude=opts.per_side(opts.conclude),
                           ignore_failure=opts.ignore_failure, show_output=opts.show_output, fill=opts.fill)
    runner = Runner(settings, _stop_rule(opts, method, on_progress, progress.enabled),
                    lambda inv: store.add_invocation(comparison_id, inv),
                    on_activity=lambda invs: store.set_activity(comparison_id, invs))
    status = "failed"
    failure: Invocation | None = None
    shell_failure: ShellCommandFailed | None = None
    # SIGTERM (e.g. from a CI timeout) is handled like Ctrl-C: stop, keep, report.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        with progress:
            for side, command in opts.per_side(opts.setup).items():
                if command:
                    run_shell(command, f"--setup ({side})")
            try:
                outcome = runner.run()
                status, failure = outcome.status, outcome.failure
            except KeyboardInterrupt:
                runner.stop_all()
                status = "interrupted"
            for side, command in opts.per_side(opts.cleanup).items():
                if command:
                    run_shell(command, f"--cleanup ({side})")
    except ShellCommandFailed as exc:
        shell_failure = exc
    finally:
        signal.signal(signal.SIGTERM, previous)
        store.finish_comparison(comparison_id, status if shell_failure is None else "failed")
        lock.release()

    record = store.comparison(comparison_id)
    assert record is not None
    report = build_report(record, store.invocations(comparison_id))
    store.close()
    if report.results or status != "failed":
        render(report, console)
    exports.write(report)
    if on_report is not None:
        on_report(report)

    if shell_failure is not None:
        raise DuetError(f"the {shell_failure.what} command failed with exit code {shell_failure.code}: "
                        f"{_last_line(shell_failure.stderr)}", hint="fix the command or run it by hand to see why",
                        exit_code=1)
    if failure is not None:
        raise _failure_error(failure, report.names)
    if status == "interrupted":
        console.print(f"[yellow]Interrupted: {measured_runs(method, report.invocations)} run(s) measured and "
                      f"kept in {escape(str(db_path))} (duet show {comparison_id}{escape(db_argument(db_path))})."
                      "[/yellow]")
        return 130
    primary = report.primary
    if opts.fail_if_slower is not None and primary is not None and exceeds_threshold(primary.ratio, opts.fail_if_slower):
        console.print(f"[red]{opts.name_b} is more than {opts.fail_if_slower:g}% slower than {opts.name_a} "
                      f"with {primary.ratio.confidence_level:.0%} confidence (--fail-if-slower).[/red]")
        return 1
    return 0


def _short(name: str, command: str, width: int = 28) -> str:
    """A name the user gave, else the command with its program's directory left out."""
    program, _, rest = command.partition(" ")
    text = f"{os.path.basename(program)} {rest}".strip()
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text if name in ("A", "B") else f"{name}: {text}"


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no error output)"


def _failure_error(inv: Invocation, names: dict[str, str]) -> DuetError:
    who = names[inv.side]
    if inv.status == "failed":
        tail = inv.stderr_tail.strip().replace("\n", " | ")[-300:] or "(no error output)"
        return CommandFailed(f"command {who} failed with exit code {inv.exit_code} "
                             f"(invocation {inv.index}): {tail}",
                             hint="fix it, or pass --ignore-failure to time failing runs anyway")
    if inv.status == "timeout":
        return CommandFailed(f"command {who} did not finish within --timeout (invocation {inv.index})",
                             hint="raise --timeout, or check the command for a hang")
    if inv.status == "signaled":
        return CommandFailed(f"command {who} was killed by signal {inv.signal} (invocation {inv.index})",
                             hint="run it by hand to see why")
    return CommandFailed(f"command {who} could not run: {inv.error or inv.status}",
                         hint="check the command, or use --method sequential if the duet set-up is the problem")


def show(db_path: Path, comparison_id: int | None, *, exports: Exports, console: Console, limit: int = 30) -> int:
    if not db_path.exists():
        raise DuetError(f"no results database at {db_path}", hint="run duet compare first, or point --db at one")
    store = Store(db_path)
    try:
        if comparison_id is None:
            records = store.comparisons(limit)
            if not records:
                console.print(f"no comparisons in {db_path} yet")
            for rec in records:
                primary = build_report(rec, store.invocations(rec.id)).primary
                judged = (f"[bold]{primary.verdict}[/bold] B/A {primary.ratio.estimate:.4f} "
                          f"[{primary.ratio.low:.4f}, {primary.ratio.high:.4f}] · {primary.runs} runs"
                          if primary else "no statistics")
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(rec.created))
                console.print(f"[bold]#{rec.id}[/bold] {when} · {rec.method} · {rec.status} · {judged}")
                console.print(f"    {_short(rec.name_a, rec.command_a, 70)}\n    {_short(rec.name_b, rec.command_b, 70)}")
            return 0
        record = store.comparison(comparison_id)
        if record is None:
            raise DuetError(f"no comparison #{comparison_id} in {db_path}", hint="duet show lists the stored ones")
        report = build_report(record, store.invocations(comparison_id))
    finally:
        store.close()
    render(report, console)
    exports.write(report)
    return 0
