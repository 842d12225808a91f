"""``duet compare`` end to end: config → plan → execute → store → analyze → report."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from duetbench import __version__
from duetbench.analyze.looks import LookSchedule, first_look
from duetbench.config.compare import CompareOptions, command_argv, hook_shell
from duetbench.errors import DuetError
from duetbench.execute.lock import MeasurementLock
from duetbench.execute.meanwhile import import_modules
from duetbench.execute.noise import ACTIVITY_EVERY_PAIR_UP_TO
from duetbench.execute.runner import Runner, RunSettings, run_shell
from duetbench.execute.stage import RunnerStage
from duetbench.host.host import host_facts, usable_cpus
from duetbench.model.invocation import Invocation
from duetbench.plan.schedule import Placement, cpu_count, place
from duetbench.report.exporters import Exports
from duetbench.report.model import ComparisonReport
from duetbench.report.progress import LiveProgress
from duetbench.store.location import is_url
from duetbench.usecases.conclude import (  # noqa: F401 - METRICS, build_report, report_stored: used from here too
    METRICS,
    REPORT_MODULES,
    Ending,
    ShellFailure,
    _DeferredComparison,
    build_report,
    conclude,
    evaluate,
    kept_before,
    measured_runs,
    render,
    report_stored,
)
from duetbench.usecases.measuring import Failures, guarded

if TYPE_CHECKING:
    import numpy as np
    from rich.console import Console

    from duetbench.analyze.choice import MethodChoice
    from duetbench.analyze.invocations import Samples
    from duetbench.analyze.monitor import MonitorDecision
    from duetbench.usecases.apart import Reporter


# -- imported on first use ---------------------------------------------------------------------------
# numpy (the statistics), SQLAlchemy (the store) and the report's rendering are not needed to start
# measuring, and importing them first delayed the first invocation by ~0.4 s (issue 17). These stand
# in for their module-level imports; each imports its module when first called (once: then it is cached).

#: ... and imported while the first warm-up unit runs (`RunSettings.during_warmup`), when the orchestrator
#: only waits. Sharing a CPU with a side there, the thread hides only part of their ~90 ms (about half the
#: warm-up's length; the rest still delays the first measured unit), and the report has nothing left to
#: import. (Where a reporter process makes the report, usecases/apart.py, it imports them instead.)
AFTER_MEASURING = (*REPORT_MODULES, "duetbench.analyze.monitor")


def samples(*args: Any, **kwargs: Any) -> Any:
    from duetbench.analyze.invocations import samples as samples_

    return samples_(*args, **kwargs)


def _with_owner(options: dict[str, Any]) -> dict[str, Any]:
    from duetbench.store.orchestrators import with_owner

    return with_owner(options)


class _Stop:
    """Why the adaptive stop ended a comparison ("" while it has not, or when it ended by count or budget)."""

    def __init__(self) -> None:
        self.reason = ""
        self.detail = ""


def _never() -> bool:
    return False


class _NoDecision:
    """analyze.monitor.MonitorDecision's "go on", without importing it (numpy) where nothing is judged."""

    stop = False
    reason = ""
    detail = ""


_NO_DECISION = _NoDecision()


def _stop_rule(opts: CompareOptions, method: str, on_progress: Callable[[int, str], None],
               display_due: Callable[[], bool] = _never, stop: _Stop | None = None, spent_s: float = 0.0,
               prior: list[Invocation] | None = None,
               watch_for: MethodChoice | None = None
               ) -> tuple[Callable[[list[Invocation], float], bool], Callable[[list[Invocation], float], int]]:
    """After each run (pair): go on? `display_due`: would the progress bar be drawn now (a CI only shown
    there is computed only then); `spent_s`: seconds already spent before this runner (auto's pilots,
    earlier segments), counted against --time-budget; `prior`: this method's runs measured by earlier
    runners of the same comparison, judged together with this runner's; `watch_for`: the pilot's choice —
    when the recent runs spread so much that the other method would win, stop with reason "conditions"
    (re-decide).

    Also returned: how many more runs the rule, having just said go on, is sure to say go on for (the
    runner's `certain`: a duet queues that many pairs to the launchers and asks again after them). Every
    look that can stop on the data — the live CI on its schedule, the conditions' windows, stability —
    falls at the same count as when asked after every run, so stopping is unchanged; only
    --time-budget is then judged by the runs' mean time so far, and may be passed by what the runs
    after it took longer than that."""
    stop = stop if stop is not None else _Stop()
    adaptive = opts.runs is None
    evidence = adaptive and opts.stop_on_evidence and method != "aduet"
    last_ci = LookSchedule(opts.min_runs)
    first = first_look(opts.min_runs, evidence)

    def should_continue(this_runner: list[Invocation], elapsed: float) -> bool:
        # analyze.monitor imports numpy: a fixed count of runs without a progress line measures without it
        # (its statistics may be imported by another process meanwhile: usecases/apart.py).
        measured = prior + this_runner if prior else this_runner
        n = measured_runs(method, measured)
        ci_text = ""
        decision: MonitorDecision | _NoDecision = _NO_DECISION
        # The live CI steers adaptive stopping (on its schedule) and the progress line (only when the bar
        # is redrawn: computing it costs ~1 ms between two pairs); with neither, it is not computed.
        deciding = adaptive and n >= first
        if n >= 3 and (last_ci.due(n) if deciding else display_due()):
            from duetbench.analyze.monitor import watch

            s = samples(method, measured, opts.metric)
            stamps = {"a_start": s.a_start, "a_end": s.a_end, "b_start": s.b_start, "b_end": s.b_end}
            decision, r = watch(method, s.a, s.b, min_units=opts.min_runs, target_rciw=opts.target_rciw,
                                confidence_level=opts.confidence, evidence=evidence, robust=opts.robust,
                                interval=_stopped_interval(opts.interval) if adaptive else opts.interval,
                                min_overlap_rate=opts.min_overlap_rate,
                                stamps=stamps if method == "aduet" else None)
            if r is not None:
                from duetbench.report.units import bracketed_interval, ci_width  # the reporter's, not at start

                ci_text = (f"B/A {r.ratio.estimate:.4f} {bracketed_interval(r.ratio.low, r.ratio.high)} "
                           f"width {ci_width(r.relative_ci_width)}")
        on_progress(n, ci_text)
        if opts.runs is not None:  # not adaptive: a fixed count
            return n < opts.runs
        # Stop on precision (a fixed-n interval, judged on its width only) or on evidence (an anytime-valid
        # confidence sequence), never because a fixed-n interval first looks significant: that inflates false
        # alarms without bound (analyze/monitor.py).
        if decision.stop:
            stop.reason, stop.detail = decision.reason, decision.detail
            return False
        if watch_for is not None and _conditions_changed(method, this_runner, opts.metric, watch_for):
            stop.reason, stop.detail = "conditions", "the runs spread so much that the other method may be more precise"
            return False
        if n < opts.min_runs:
            return True
        if n >= opts.max_runs or elapsed + spent_s >= opts.time_budget:
            return False
        if opts.run_criterion is not None and _runs_stable(opts, method, measured):
            stop.reason, stop.detail = "stability", f"both sides' runs are stable by {opts.run_criterion}"
            return False
        return True

    def certain(this_runner: list[Invocation], elapsed: float) -> int:
        measured = prior + this_runner if prior else this_runner
        n = measured_runs(method, measured)
        if opts.runs is not None:
            return max(1, opts.runs - n)
        # the next live CI (the first at `first`, then on its schedule), and the most runs
        more = min(opts.max_runs, last_ci.next_due(max(n, first - 1))) - n
        mine = measured_runs(method, this_runner)
        if watch_for is not None:  # the conditions' windows count this runner's runs only
            from duetbench.analyze.choice import RECENT_UNITS, RECENT_WINDOWS

            more = min(more, max(RECENT_UNITS * RECENT_WINDOWS, (mine // RECENT_UNITS + 1) * RECENT_UNITS) - mine)
        if opts.run_criterion is not None:  # stability is judged after every run from --min-runs on
            more = min(more, max(1, opts.min_runs - n))
        if mine > 0 and elapsed > 0:  # --time-budget: as many as the runs' mean time so far leaves room for
            more = min(more, int((opts.time_budget - spent_s - elapsed) / (elapsed / mine)))
        return max(1, more)

    return should_continue, certain


def _conditions_changed(method: str, measured: list[Invocation], metric: str, choice: MethodChoice) -> bool:
    """Every RECENT_UNITS runs of this runner: did each of its last RECENT_WINDOWS windows of RECENT_UNITS
    runs spread so much that the pilot would have chosen the other method?"""
    from duetbench.analyze.choice import (
        RECENT_UNITS,
        RECENT_WINDOWS,
        SEQUENTIAL_MARGIN,
        conditions_changed,
        unit_sd,
    )

    n = measured_runs(method, measured)
    if n < RECENT_UNITS * RECENT_WINDOWS or n % RECENT_UNITS:
        return False
    s = samples(method, measured, metric)
    k = min(s.a.size, s.b.size)
    chosen = next(c for c in choice.candidates if c.method == method)
    other = next(c for c in choice.candidates if c.method != method)
    # The same spread the pilot judged this method by (plain for sequential rounds).
    recent = [unit_sd(method, s.a[end - RECENT_UNITS:end], s.b[end - RECENT_UNITS:end], robust_sequential=False)
              for end in range(k - RECENT_UNITS * (RECENT_WINDOWS - 1), k + 1, RECENT_UNITS)]
    return conditions_changed(chosen, other, recent, sequential_margin=SEQUENTIAL_MARGIN)


def _stopped_interval(interval: str) -> str:
    """The interval an adaptive stop judges and reports: stopping when the spread looks small needs the
    t family at α/2 (analyze/monitor.py); the bootstrap is the user's explicit choice and stays as is."""
    return "t-stopped" if interval == "t" else interval


def _measure(opts: CompareOptions, settings: RunSettings, method: str, options: dict[str, Any],
             comparison: _DeferredComparison, stop: _Stop, on_progress: Callable[[int, str], None],
             progress: LiveProgress, ends: ExitStack) -> tuple[str, Invocation | None, str]:
    """Run the comparison: with --method auto, a pilot decides the method, and a change of conditions
    (the chosen method's runs spreading far more than in its pilot) makes it decide again, at most
    MAX_REDECISIONS times. Staying with the method, the runs go on counting; switching, the earlier
    method's runs are kept as warm-ups, since they cannot enter the new method's interval.
    Returns (status, failure, the method that was measured last). Its runners share one stage: the
    launchers, cgroups and scratch directory live as long as the comparison (execute/stage.py), ended by
    `ends` (where a reporter reports, while it does: ~2.5 ms less after the last pair)."""
    stage = ends.enter_context(RunnerStage())
    return _measure_on(stage, opts, settings, method, options, comparison, stop, on_progress, progress)


def _measure_on(stage: RunnerStage, opts: CompareOptions, settings: RunSettings, method: str,
                options: dict[str, Any], comparison: _DeferredComparison, stop: _Stop,
                on_progress: Callable[[int, str], None], progress: LiveProgress) -> tuple[str, Invocation | None, str]:
    auto = method == "auto"
    spent = 0.0
    prior: list[Invocation] = []
    watch_for: MethodChoice | None = None
    history: list[dict[str, object]] = []
    seed = opts.seed
    # Every runner of the comparison numbers its pairs (rounds) on from the last one's: a pilot's warm-ups
    # and the measured runs never share a number, which the store's activity records are matched by.
    first = settings.first
    while True:
        if method == "auto" or stop.reason == "conditions":
            stop.reason = ""
            pilot = Pilot(msgspec.structs.replace(settings, seed=seed, warmup=settings.warmup if not history else 0,
                                              first=first), comparison.add_invocation, opts.metric, stage)
            progress.update(done=measured_runs(method, prior) if prior else 0, total=max(opts.min_runs, 1),
                            description="auto: trying duet and sequential", ci="")
            choice, status, failure = pilot.run()
            spent += pilot.elapsed_s
            seed += Pilot.BLOCKS * 2
            if choice is None:
                return status, failure, method
            after = measured_runs(method, prior) if prior else 0
            if history and choice.method != method:
                comparison.open().keep_as_warmup(comparison.id)
                prior = []
            history.append({"after_runs": after, **choice.to_dict(), "elapsed_s": pilot.elapsed_s,
                            "storing_s": pilot.storing_s})
            method = choice.method
            options["auto"] = {**choice.to_dict(), "history": history}
            watch_for = choice
            first = pilot.next_first
            settings = msgspec.structs.replace(settings, method=method, warmup=0, seed=seed, first=first)
        if auto:  # (analyze/ imports numpy: imported by the pilot by now, never before the first invocation)
            from duetbench.analyze.choice import MAX_REDECISIONS
        fixed = not auto and opts.runs is not None  # this runner measures exactly opts.runs pairs (rounds)
        should_continue, certain = _stop_rule(opts, method, on_progress, progress.due, stop, spent, prior,
                                              watch_for if auto and len(history) <= MAX_REDECISIONS else None)
        # Pairs are queued to the launchers only where their journal can name the store without a secret
        # on disk (execute/journal.py): a database file, not a URL, which may hold a password.
        journaled = not is_url(str(comparison.db_path))
        runner = Runner(msgspec.structs.replace(settings, pairs_at_most=opts.runs) if fixed else settings,
                        should_continue, comparison.add_invocation, on_activity=comparison.set_activity,
                        on_invocations=comparison.add_invocations, certain=certain if journaled else None,
                        stored_at=lambda: (str(comparison.db_path), comparison.id) if comparison.id >= 0 else None,
                        stage=stage)
        try:
            outcome = runner.run()
        except KeyboardInterrupt:
            runner.stop_all()
            return "interrupted", None, method
        if stop.reason != "conditions" or outcome.status != "complete":
            return outcome.status, outcome.failure, method
        spent += outcome.elapsed_s
        prior = prior + outcome.measured
        first = max((i.pair for i in outcome.measured), default=first - 1) + 1


class Pilot:
    """`--method auto`: a short pilot of duet pairs and sequential rounds, interleaved in blocks so a change
    of conditions meets both, judged by `analyze.choice`. Its invocations are stored as warm-ups: kept,
    never in the final interval, so the choice cannot bend it."""

    BLOCKS = 2
    UNITS_PER_BLOCK = 3

    def __init__(self, settings: RunSettings, on_invocation: Callable[[Invocation], None], metric: str,
                 stage: RunnerStage | None = None) -> None:
        self.settings = settings
        self.stage = stage
        self.on_invocation = on_invocation
        self.metric = metric
        self.elapsed_s = 0.0
        # One list per block: each runner numbers its pairs from 0, so blocks are paired separately.
        self.invocations: dict[str, list[list[Invocation]]] = {"duet": [], "sequential": []}
        self.seconds: dict[str, float] = {"duet": 0.0, "sequential": 0.0}
        # Of elapsed_s, the time its invocations took to store: in the first pilot that holds the store's
        # one-time opening, which every method pays (the deciding cost is the rest).
        self.storing_s = 0.0
        # The number the next block's first pair (round) gets: each block goes on from the last.
        self.next_first = settings.first

    def _keep(self, method: str, inv: Invocation) -> None:
        # Stored as a warm-up (never in the final interval); the runner's own copy stays measured, so
        # its count of measured pairs still ends the block.
        t0 = time.monotonic()
        self.on_invocation(msgspec.structs.replace(inv, warmup=True))
        self.storing_s += time.monotonic() - t0
        self.next_first = max(self.next_first, inv.pair + 1)
        if not inv.warmup:
            self.invocations[method][-1].append(inv)

    def run(self) -> tuple[MethodChoice | None, str, Invocation | None]:
        t0 = time.monotonic()
        try:
            for block in range(self.BLOCKS):
                for k, method in enumerate(("duet", "sequential")):
                    settings = msgspec.structs.replace(
                        self.settings, method=method, seed=self.settings.seed + 2 * block + k,
                        warmup=self.settings.warmup if block == 0 else 0, first=self.next_first)
                    units = self.UNITS_PER_BLOCK

                    def more(measured: list[Invocation], elapsed: float, m: str = method, u: int = units) -> bool:
                        return measured_runs(m, measured) < u

                    self.invocations[method].append([])
                    def keep(inv: Invocation, m: str = method) -> None:
                        self._keep(m, inv)

                    runner = Runner(settings, more, keep, stage=self.stage)
                    try:
                        outcome = runner.run()
                    except KeyboardInterrupt:
                        runner.stop_all()
                        return None, "interrupted", None
                    # Per unit, what the measured units took (from the first measured one's start): the
                    # steady cost the chosen method will pay. The wall time around the runner also holds the
                    # warm-up and, in the first block, the store's one-time opening (~0.2 s, paid by every
                    # method): counted, it made the duet's pairs look ~2.7× dearer than they are.
                    self.seconds[method] += outcome.elapsed_s
                    if outcome.status != "complete":
                        return None, outcome.status, outcome.failure
        finally:
            self.elapsed_s = time.monotonic() - t0
        # Imported only now (numpy, ~100 ms here): before the first invocation they delayed it, and the
        # warm-up's task has imported them by now (`_store_then`, `AFTER_MEASURING`).
        import numpy as np

        from duetbench.analyze.choice import (
            SEQUENTIAL_MARGIN,
            choose,
            duet_candidate,
            sequential_candidate,
        )

        cands = {}
        for metric in ("wall", "cpu"):
            d = [samples("duet", block, metric) for block in self.invocations["duet"]]
            q = [samples("sequential", block, metric) for block in self.invocations["sequential"]]
            cands[metric] = (
                duet_candidate(np.concatenate([x.a for x in d]), np.concatenate([x.b for x in d]),
                               self.seconds["duet"]),
                sequential_candidate(*_rounds(q), self.seconds["sequential"]))
        main = cands[self.metric]
        return (choose(*main, metric=self.metric, cpu=cands["cpu"], sequential_margin=SEQUENTIAL_MARGIN),
                "complete", None)


def _rounds(blocks: list[Samples]) -> tuple[np.ndarray, np.ndarray]:
    """A's and B's times of sequential blocks, each block cut to its complete rounds."""
    import numpy as np

    a = [x.a[: min(x.a.size, x.b.size)] for x in blocks]
    b = [x.b[: min(x.a.size, x.b.size)] for x in blocks]
    return np.concatenate(a), np.concatenate(b)


def _runs_stable(opts: CompareOptions, method: str, measured: list[Invocation]) -> bool:
    """Run stopping of Laaber et al. 2020 §4.2.2 on each side's invocations (one value per run), for the pair."""
    from duetbench.analyze.stopping import StoppingParams, pair_run_stop

    s = samples(method, measured, opts.metric)
    if min(s.a.size, s.b.size) < 2:
        return False
    params = StoppingParams(criterion=opts.run_criterion or "cv", f_min=opts.min_runs, f_max=opts.max_runs)
    decision = pair_run_stop([[v] for v in s.a], [[v] for v in s.b], params, live=True)
    return decision.stop and decision.stable


def run_compare(opts: CompareOptions, *, db_path: Path, exports: Exports, console: Console,
                show_progress: bool = True, on_report: Callable[[ComparisonReport], None] | None = None,
                time_unit: str | None = None) -> int:
    """Measure, store, judge and report one comparison; the exit code (0, EXIT_SLOWER when --fail-if-slower
    tripped, 130 interrupted). `on_report` gets the report before any failure is raised (a parameter scan
    collects its comparisons so). With no command B, one command is benchmarked on its own."""
    from duetbench.usecases import apart

    # The reporter forked when `duet` started (usecases/apart.py), if any: used, or ended before measuring.
    reporter = apart.take()
    if reporter is not None and not _report_apart(opts, console, show_progress, on_report):
        reporter.kill()
        reporter = None
    if opts.command_b is None:
        from duetbench.usecases.single import run_single

        return run_single(opts, db_path=db_path, exports=exports, console=console, show_progress=show_progress,
                          time_unit=time_unit, on_report=on_report)
    try:
        return _compare(opts, db_path=db_path, exports=exports, console=console, show_progress=show_progress,
                        on_report=on_report, time_unit=time_unit, reporter=reporter)
    except BaseException:
        if reporter is not None:
            reporter.kill()
        raise


def _report_apart(opts: CompareOptions, console: Console, show_progress: bool,
                  on_report: Callable[[ComparisonReport], None] | None) -> bool:
    """Can the reporter forked at start report this comparison (usecases/apart.py)? Two commands, no
    progress line; one comparison (not a scan's), printed on a console made as it says."""
    from duetbench.report.lazy_console import LazyConsole

    return (opts.command_b is not None and not show_progress and on_report is None
            and isinstance(console, LazyConsole))


def _judged_while_measuring(opts: CompareOptions) -> tuple[str, ...]:
    """The statistics the orchestrator itself needs while it measures (none for a fixed count of runs of
    a fixed method): the adaptive stop's, --method auto's pilot's, --run-criterion's."""
    modules: tuple[str, ...] = ()
    if opts.runs is None or opts.method == "auto":
        modules += ("duetbench.analyze.invocations", "duetbench.analyze.monitor")
    if opts.method == "auto":
        modules += ("duetbench.analyze.choice",)
    if opts.run_criterion is not None:
        modules += ("duetbench.analyze.stopping",)
    return modules


def placement_of(opts: CompareOptions, usable: list[int]) -> Placement:
    """Where `opts`' commands run on this process's `usable` CPUs (--cpus-per-command); a count above
    them is bad input."""
    per = cpu_count(opts.cpus_per_command, len(usable))
    if per > len(usable):
        raise DuetError(f"--cpus-per-command {per}: this process may use only {len(usable)} CPU(s) "
                        f"({', '.join(map(str, usable))})",
                        hint=f"give at most {len(usable)}, or all; `taskset`/cgroups may limit what it may use")
    return place(usable, per)


def _compare(opts: CompareOptions, *, db_path: Path, exports: Exports, console: Console, show_progress: bool,
             on_report: Callable[[ComparisonReport], None] | None, time_unit: str | None,
             reporter: Reporter | None) -> int:
    """`run_compare` of two commands: measure and store, then report here or hand over to `reporter`."""
    assert opts.command_b is not None
    command_b: str = opts.command_b  # narrowed here: the deferred store call below runs later
    argv: dict[str, list[str]] = {}
    for side, command, name in (("A", opts.command_a, opts.name_a), ("B", command_b, opts.name_b)):
        argv[side], note = command_argv(command, shell=opts.shell, side=name)
        if note:
            from rich.markup import escape

            console.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
    host = host_facts()
    usable = usable_cpus()
    placement = placement_of(opts, usable)
    method: str = opts.method
    options = opts.model_dump()
    options["cpus_per_command"] = placement.per_command  # "all" as the count it was here
    # a short duet keeps one activity record per pair so analysis can judge one-sided interference
    activity_every_pair = opts.runs is not None and opts.runs <= ACTIVITY_EVERY_PAIR_UP_TO
    options["activity_every_pair"] = activity_every_pair
    if method == "auto" and not placement.duet_possible:
        method = "sequential"
        reason = ("sequential: only one usable CPU, so no duet is possible" if placement.per_command == 1 else
                  f"sequential: each command is given {placement.per_command} CPUs (--cpus-per-command) and "
                  f"{len(usable)} are usable, so no duet is possible")
        options["auto"] = {"method": method, "reason": reason, "cpu_hint": None, "candidates": []}
        # asked for: more CPUs per command than a duet can have here is a choice, not a shortfall
        options["fell_back_to_sequential"] = placement.per_command == 1
    if not placement.duet_possible and method != "sequential":
        method = "sequential"
        options["fell_back_to_sequential"] = True
    cpus = placement.cpus
    lock = MeasurementLock(f"duet compare {opts.command_a!r} {opts.command_b!r}")
    lock.acquire()
    record_method = method
    comparison = _DeferredComparison(db_path, lambda store: store.begin_comparison(
        method=method, name_a=opts.name_a, name_b=opts.name_b, command_a=opts.command_a,
        command_b=command_b, seed=opts.seed, options=_with_owner(options), host=host, tool_version=__version__))

    total = opts.runs or opts.min_runs
    progress = LiveProgress(console, total, show_progress)

    shown_ci = ""

    def on_progress(n: int, ci: str) -> None:
        nonlocal total, shown_ci
        total = max(total, n + (0 if opts.runs else 1))
        shown_ci = ci or shown_ci  # the live CI is not recomputed after every run: show the last one
        progress.update(done=n, total=total, description=f"{method} {opts.name_a} vs {opts.name_b}", ci=shown_ci)

    settings = RunSettings(method=method, argv=argv, cpus=cpus, cpu_sets=placement.cpu_sets, seed=opts.seed,
                           warmup=opts.warmup,
                           timeout_s=opts.timeout, prepare=opts.per_side(opts.prepare),
                           conclude=opts.per_side(opts.conclude),
                           ignore_failure=opts.ignore_failure,
                           ignore_exit_codes=frozenset(opts.ignore_exit_codes),
                           show_output=opts.show_output, fill=opts.fill,
                           output={side: where or "null" for side, where in opts.per_side(opts.output).items()},
                           input_path=opts.input, labels={"A": opts.name_a, "B": opts.name_b},
                           hook_shell=hook_shell(opts.shell),
                           activity_every_pair=activity_every_pair,
                           during_warmup=import_modules((*AFTER_MEASURING, *_judged_while_measuring(opts)))
                           if reporter is None
                           else _store_then(reporter.wait_ready, _judged_while_measuring(opts)))
    if reporter is not None and settings.warmup == 0:
        reporter.wait_ready()  # no warm-up to wait beside: its imports must end before the first measured run
    # What the runners share (launchers, cgroups, scratch) is ended by `ends`: where a reporter reports,
    # while it does.
    with ExitStack() as ends:
        stop = _Stop()
        status = "failed"
        failure: Invocation | None = None

        def finish(failures: Failures) -> None:
            if stop.reason:
                options["stopped_by"] = stop.reason
                if stop.reason == "evidence":
                    # The stop looked at the estimate: only the confidence sequence stays valid (analyze/monitor.py).
                    options["interval"] = "anytime"
                else:  # it looked at the spread: the interval it judged is the one that stays valid
                    options["interval"] = _stopped_interval(opts.interval)
            comparison.open().finish_comparison(comparison.id, status if failures.shell is None else "failed",
                                                options if stop.reason or "auto" in options else None,
                                                method=method if method != record_method else None)

        # SIGTERM (e.g. from a CI timeout) and SIGHUP are handled like Ctrl-C: stop, keep, report.
        with guarded(lambda: comparison.id >= 0, finish, lock) as failures, progress:
            for side, script in opts.per_side(opts.setup).items():
                if script:
                    run_shell(script, f"--setup ({side})", settings.hook_shell)
            status, failure, method = _measure(opts, settings, method, options, comparison, stop, on_progress,
                                               progress, ends)
            for side, script in opts.per_side(opts.cleanup).items():
                if script:
                    run_shell(script, f"--cleanup ({side})", settings.hook_shell)
        if failures.store is not None:
            if reporter is not None:
                reporter.kill()
            ends.close()
            raise kept_before(failures.store, comparison, lambda invs: measured_runs(method, invs), db_path=db_path,
                              exports=exports, console=console, time_unit=time_unit, on_report=on_report)

        shell = failures.shell
        ending = Ending(status, failure, ShellFailure(shell.what, shell.command, shell.code, shell.stderr)
                        if shell is not None else None,
                        method, opts.name_a, opts.name_b, opts.fail_if_slower)
        if reporter is not None:
            from duetbench.report.lazy_console import LazyConsole
            from duetbench.usecases.apart import Handover

            comparison.close()
            assert isinstance(console, LazyConsole)  # _report_apart
            code = reporter.hand_over(Handover(comparison.id, ending, db_path, exports, console.options_given,
                                               time_unit), meanwhile=ends.close)
            if code is not None:
                return code
        ends.close()
        return conclude(ending, comparison, db_path=db_path, exports=exports, console=console, time_unit=time_unit,
                        on_report=on_report)


def _store_then(wait: Callable[[], None], judged_by: Sequence[str] = ()) -> Callable[[], None]:
    """The warm-up's task where another process reports: import the store (the first pair's) and the
    statistics the orchestrator judges by while it measures (`judged_by`), then wait for the reporter's
    imports."""
    def task() -> None:
        import importlib
        import pickle  # noqa: F401 - the hand-over's (~4 ms here, not at the end)

        import duetbench.store.direct  # noqa: F401

        for name in judged_by:
            importlib.import_module(name)
        wait()

    return task


def _short(name: str, command: str, width: int = 28) -> str:
    """A name the user gave, else the command with its program's directory left out."""
    program, _, rest = command.partition(" ")
    text = f"{os.path.basename(program)} {rest}".strip()
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text if name in ("A", "B") else f"{name}: {text}"


def show(db_path: Path, comparison_id: int | None, *, exports: Exports, console: Console, limit: int = 30) -> int:
    from rich.markup import escape

    from duetbench.report.model import runs_measured
    from duetbench.report.units import bracketed_interval
    from duetbench.store.db import Store

    if not db_path.exists():
        raise DuetError(f"no results database at {db_path}", hint="run duet compare first, or point --db at one")
    store = Store(db_path)
    try:
        if comparison_id is None:
            records = store.comparisons(limit)
            if not records:
                console.print(f"no comparisons in {db_path} yet")
            for rec in records:
                built = build_report(rec, store.invocations(rec.id))
                when = time.strftime("%Y-%m-%d %H:%M", time.localtime(rec.created))
                if built.benchmark is not None or rec.method == "single":
                    b = built.benchmark
                    judged = (f"mean {b.mean * 1000:.3f} ms ± {b.stdev * 1000:.3f} ms · {b.runs} runs"
                              if b is not None else "no statistics")
                    console.print(f"[bold]#{rec.id}[/bold] {when} · one command · {rec.status} · {judged}")
                    console.print(f"    {escape(_short(rec.name_a, rec.command_a, 70))}")
                    continue
                primary = built.primary
                judged = (f"[bold]{primary.verdict}[/bold] B/A {primary.ratio.estimate:.4f} "
                          f"{escape(bracketed_interval(primary.ratio.low, primary.ratio.high))} "
                          f"· {runs_measured(primary)}"
                          if primary else "no statistics")
                console.print(f"[bold]#{rec.id}[/bold] {when} · {rec.method} · {rec.status} · {judged}")
                console.print(f"    {escape(_short(rec.name_a, rec.command_a, 70))}\n"
                              f"    {escape(_short(rec.name_b, rec.command_b, 70))}")
            stored = store.comparison_count() if len(records) == limit else len(records)
            if stored > len(records):  # else a list cut at --limit reads as everything there is
                left = stored - len(records)
                console.print(f"... and {left} older comparison{'s' if left > 1 else ''}, not shown "
                              f"(--limit {stored} lists them all)", highlight=False)
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
