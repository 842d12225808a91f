"""``duet run`` end to end: campaign file → plan → execute run by run → store → analyze → report.

One start-up path for every execution backend (execute/backends/): the campaign is read and checked,
the seed chosen once and recorded, the plan made once, the campaign recorded with its source hash (or
found again by ``--resume``), a dry run printed; then the backend executes the planned runs, and the
summary is read back from the store. The backend only decides where and how runs are measured: in
this process (local processes or containers), or by workers elsewhere (Slurm array tasks) that
re-enter this module's per-run loop (`worker_loop`).

Each run is committed to the store the moment it finishes (with its raw outputs kept in its run
directory), so an interrupted campaign loses nothing finished and ``--resume`` continues with exactly
the runs that are missing, in the planned order. A failing run is recorded (exit code, stderr) and
the campaign goes on.
"""
from __future__ import annotations

import hashlib
import math
import os
import random
import re
import shlex
import subprocess
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
from rich.console import Console
from rich.markup import escape

from duetbench import __version__
from duetbench.analyze.api import AnalysisOptions, AnalysisRow
from duetbench.analyze.stopping import StoppingParams, pair_run_stop, ratio_precision_stop
from duetbench.analyze.sync import judge as judge_sync
from duetbench.analyze.sync import run_sync_statuses
from duetbench.analyze.tables import analyze_table
from duetbench.config.campaign_model import BenchmarkSpec, Campaign, cpus_given, stopping_params
from duetbench.errors import DuetError
from duetbench.execute.backends.base import Backend, CampaignJob, Outcome, RunLoop
from duetbench.execute.backends.registry import create_backend
from duetbench.execute.barrier import ABORT_EXITED, ABORT_TIMEOUT
from duetbench.execute.campaign_run import (
    ITERATION_LOG,
    STDERR,
    STDOUT,
    RunExecution,
    _Interrupted,
    execute_run,
    side_argv,
)
from duetbench.execute.container import ContainerEngine
from duetbench.execute.shell import run_in_group
from duetbench.host.host import host_facts, usable_cpus
from duetbench.model.invocation import Invocation
from duetbench.model.table import discard_leading
from duetbench.plan.campaign import AUTO_CANDIDATES, METHOD_ORDER, PlannedRun, RunRequest, make_plan
from duetbench.report.campaign import CampaignProgress, print_plan, print_summary
from duetbench.report.warnings import name_noise, name_parallel
from duetbench.store.campaigns import CampaignRecord, CampaignStore, RunRecord, StoredIteration, iteration_table
from duetbench.store.db import Store
from duetbench.store.location import StoreLocation
from duetbench.store.option import db_argument
from duetbench.store.orchestrators import claim, with_owner
from duetbench.usecases import campaign_auto
from duetbench.usecases.campaign_rows import run_counts
from duetbench.usecases.interrupts import hold_stop_signals, release, restore, stop_like_ctrl_c

if TYPE_CHECKING:
    from duetbench.report.exporters import Exports
    from duetbench.report.model import CampaignReport



@dataclass
class RunOptions:
    #: The results database: a SQLite file, or a server's parsed location (`--db postgresql://…`).
    db: Path | StoreLocation
    dry_run: bool = False
    resume: bool = False
    #: With resume: run again the runs that failed (their records are kept, marked "retried").
    retry_failed: bool = False
    executor: str = "auto"
    seed: int | None = None
    show_output: bool = False
    progress: bool = True
    use_cgroups: bool = True
    confidence: float = 0.99
    n_resamples: int = 10_000
    #: Stop a benchmark's method once the CI of B/A is this narrow relative to it (after min_runs runs).
    target_width: float | None = None
    min_runs: int = 10
    #: Stop launching runs after this many seconds (the campaign stays resumable).
    time_budget: float | None = None
    #: Dynamic warmup inside every run (Laaber et al. 2020 §4.2.1), from the hooks' iteration logs; None: off.
    warmup_params: StoppingParams | None = None
    #: Stop launching a method's runs once its runs are stable by this criterion (Laaber et al. 2020 §4.2.2); None: off.
    run_params: StoppingParams | None = None
    #: --export-FORMAT files of the closing analysis (also written when interrupted: what finished).
    exports: Exports | None = None

    def to_json(self) -> dict[str, Any]:
        """What a worker in another process needs to run its share the same way (not where results go)."""
        # The exports are written where the campaign was started (after the summary), not by the workers.
        data = {k: v for k, v in asdict(replace(self, exports=None)).items()
                if k not in ("db", "dry_run", "resume", "progress", "exports")}
        for key in ("warmup_params", "run_params"):
            if data[key] is not None:
                data[key] = dict(data[key])
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any], db: Path | StoreLocation) -> RunOptions:
        values = dict(data)
        for key in ("warmup_params", "run_params"):
            if values.get(key) is not None:
                values[key] = StoppingParams(**values[key])
        return cls(db=db, progress=False, **values)


def read_campaign(path: Path) -> Campaign:
    from duetbench.config.campaign import load_campaign

    return load_campaign(path)


def artifact_commands(campaign: Campaign) -> dict[tuple[str, str], str]:
    out = {}
    for bench in campaign.benchmarks:
        for side, spec in bench.sides.items():
            # quoted as the shell would need it: the words joined bare are a different command
            text = spec.command if spec.shell else shlex.join(side_argv(spec.command, False))
            where = f" (in {spec.container.image})" if spec.container else ""
            out[(bench.name, side)] = text + where
    return out


def outputs_writable(directory: Path) -> None:
    """Refuse in one line where the runs' raw outputs cannot be written under `directory`: a `sudo duet
    run` beside the same database made it root's (0755), and every later run of the database's owner died
    with a PermissionError traceback, its campaign left to be marked "orchestrator died"."""
    existing = directory
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if os.access(existing, os.W_OK | os.X_OK):
        return
    try:
        import pwd

        owner = pwd.getpwuid(existing.stat().st_uid).pw_name
    except (OSError, KeyError):
        owner = "another user"
    whose = "it" if existing == directory else str(existing)
    raise DuetError(f"cannot write the runs' raw outputs into {directory}: {whose} belongs to {owner}",
                    hint=f"give it back (sudo chown -R $USER {existing}), or use a results database in a directory "
                         "of yours (--db PATH)")


def record_artifacts(artifacts: dict[str, str], directory: Path) -> dict[str, str]:
    """Run each artifact command once on the host, keep its output in a file and in the store."""
    directory.mkdir(parents=True, exist_ok=True)
    recorded = {}
    for name, command in artifacts.items():
        # In a group of its own (execute/shell.py): a hung artifact or an interrupt leaves nothing running.
        try:
            result = run_in_group(["/bin/sh", "-c", command], timeout=60, capture_stdout=True)
            text = result.stdout if result.returncode == 0 else (
                f"[exit {result.returncode}] {result.stdout}{result.stderr}")
        except subprocess.TimeoutExpired:
            text = "[timed out after 60 s]"
        (directory / name).write_text(text)
        recorded[name] = text
    return recorded


@dataclass(frozen=True)
class _ParsedSide:
    iterations: list[StoredIteration]
    clock: str
    notes: list[str]
    log_lines: int  # lines of this side in its hook iteration log (0: no log)
    harness_sync: str | None  # the hook's state as the harness recorded it (pyperf's duet_sync), if it did


def _parse_side(bench: BenchmarkSpec, execution: RunExecution, side: str) -> _ParsedSide:
    """The side's iterations via its parser, with the hook log's timestamps where they help."""
    from duetbench.harness.iteration_log import read_iteration_log
    from duetbench.harness.model import ParserInput
    from duetbench.harness.registry import parse

    result = execution.sides[side]
    out = result.outdir
    log_path = out / ITERATION_LOG
    notes: list[str] = []
    log_lines = []
    if log_path.exists():
        log = read_iteration_log(log_path)
        log_lines = [line for line in log.lines if line.side == side]
        notes += [f"{side}: {n}" for n in log.notes]
    # The outputs stay on disk: a benchmark printing gigabytes must not grow the orchestrator.
    inp = ParserInput(stdout_path=out / STDOUT, stderr_path=out / STDERR, files=result.files,
                      iteration_log=log_lines, side=side)
    parsed = parse(bench.parser.name, dict(bench.parser.options), inp)
    if parsed.timestamp_note:
        notes.append(f"{side}: {parsed.timestamp_note}")
    its = [StoredIteration(side, i, it.name, it.value_s, it.start_ns, it.end_ns, it.warmup)
           for i, it in enumerate(parsed.iterations)]
    sync = parsed.metadata.get("duet_sync")
    return _ParsedSide(its, parsed.clock, notes, len(log_lines), None if sync is None else str(sync))


_STACK_FRAME = re.compile(r"^\s+at |^\s*\.\.\. \d+ more\s*$|^\s*File \"")


def cause_line(stderr: str) -> str:
    """The line of a failed run's stderr that says why: the last one that is not a stack frame. A JVM ends
    its output with frames (`\tat org.openjdk.jmh.Main.main(Main.java:71)`); the exception's message,
    e.g. JMH's "Another JMH instance might be running ... -Djmh.ignoreLock=true", is above them."""
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    for line in reversed(lines):
        if not _STACK_FRAME.match(line):
            return line.strip()
    return lines[-1].strip() if lines else ""


def _failure_text(side: str, inv: Invocation) -> str:
    last = cause_line(inv.stderr_tail)
    what = {"failed": f"exit code {inv.exit_code}", "signaled": f"killed by signal {inv.signal}",
            "timeout": "timed out"}.get(inv.status, inv.status.replace("_", " "))
    detail = inv.error or last
    return f"{side} {what}" + (f": {detail}" if detail else "")


def _name_the_waiting_side(errors: list[str], execution: RunExecution) -> list[str]:
    """When one side of a sync duet hangs inside an iteration, its partner finishes its own, waits at the
    barrier until its own timeout ends it too (or, released when the hung side is ended, runs on into it):
    "B timed out; A timed out" blames both. A party left arrived at the page says a side waited in vain;
    it is the one that logged more iterations."""
    timed_out = [side for side, r in execution.sides.items() if r.invocation.status == "timeout"]
    if not execution.barrier_waiting or len(timed_out) != 2:
        return errors
    logged = {}
    for side in timed_out:
        try:
            logged[side] = (execution.sides[side].outdir / ITERATION_LOG).read_bytes().count(b"\n")
        except OSError:
            logged[side] = 0
    waiter, hung = sorted(timed_out, key=lambda side: -logged[side])
    if logged[waiter] == logged[hung]:
        return errors
    why = (f" (it waited at the barrier for {hung}, which logged {logged[hung]} iterations and never ended its "
           f"next; {waiter} logged {logged[waiter]})")
    said = f"{waiter} timed out"
    return [said + why + e[len(said):] if e.startswith(said) else e for e in errors]


def to_record(bench: BenchmarkSpec, execution: RunExecution) -> RunRecord:
    """Judge a finished run: ok only if every side exited cleanly and its output parsed."""
    run = execution.run
    errors: list[str] = []
    notes: list[str] = []
    iterations: list[StoredIteration] = []
    clocks = set()
    log_counts: dict[str, int] = {}
    parsed_counts: dict[str, int] = {}
    harness_sync: dict[str, str] = {}
    for side, result in execution.sides.items():
        inv = result.invocation
        # Ended by dynamic warmup stopping (the launcher reports being told to stop): a complete run.
        ended_by_us = execution.stopped_early and inv.status == "interrupted"
        if not inv.ok and not ended_by_us:
            errors.append(_failure_text(side, inv))
            continue
        if result.missing:
            notes.append(f"{side}: result file(s) not found: {', '.join(result.missing)}")
        try:
            parsed = _parse_side(bench, execution, side)
        except DuetError as exc:
            # Name the files parsed, unless the parser's message already does.
            parsed_file = ITERATION_LOG if bench.parser.name == "iteration-log" else STDOUT
            where = "" if str(result.outdir) in str(exc) else f" ({result.outdir}/{parsed_file})"
            errors.append(f"{side} output{where} could not be parsed: {exc}"
                          + (f" — its {result.hook_problem}" if result.hook_problem else ""))
            continue
        its, clock = parsed.iterations, parsed.clock
        notes += parsed.notes
        log_counts[side], parsed_counts[side] = parsed.log_lines, len(its)
        if parsed.harness_sync is not None:
            harness_sync[side] = parsed.harness_sync
        if not its:
            errors.append(f"{side} produced no iterations ({bench.parser.name} parser found none)"
                          + (f" — its {result.hook_problem}" if result.hook_problem else ""))
        elif result.hook_problem:
            notes.append(f"{side}: {result.hook_problem}")
        iterations += its
        clocks.add(clock)
    clock = clocks.pop() if len(clocks) == 1 else ("none" if not clocks else "mixed")
    errors = _name_the_waiting_side(errors, execution)
    if execution.live is not None:
        notes.append(execution.live.note())
        decided = execution.live.decision
        if decided is not None and decided.warmup_iterations:
            # The criterion's warmup: the first iterations of every side, in the harness's order.
            w = decided.warmup_iterations
            iterations = [StoredIteration(it.side, it.seq, it.name, it.value_s, it.start_ns, it.end_ns,
                                          it.warmup or it.seq < w) for it in iterations]
    if execution.barrier_abort == ABORT_TIMEOUT:
        notes.append("a barrier wait timed out: the sides stopped synchronizing their iterations mid-run "
                     "(raise barrier_timeout, or check that both sides run the same number of iterations)")
    elif execution.barrier_abort not in (0, ABORT_EXITED):
        notes.append(f"the barrier was aborted (code {execution.barrier_abort}) before either side exited")
    if run.method == "duet" and not errors:
        # Recorded with the run, so that every later analysis pairs it by what really happened.
        notes.append(judge_sync(log_counts=log_counts, parsed_counts=parsed_counts,
                                releases=execution.barrier_releases, harness_sync=harness_sync,
                                ended_by_us=execution.stopped_early, waiting=execution.barrier_waiting).note())
    return RunRecord(
        id=0, key=run.key, position=run.position, benchmark=run.benchmark, method=run.method,
        repetition=run.repetition, launch_order="".join(run.sides), status="failed" if errors else "ok",
        error="; ".join(errors), started=execution.started, finished=execution.finished,
        run_dir=str(execution.run_dir), clock=clock, notes=notes,
        sides={s: r.invocation for s, r in execution.sides.items()}, iterations=iterations,
        adaptive_warmup=execution.live.outcome() if execution.live is not None else None)


def find_resumable(campaigns: CampaignStore, campaign: Campaign, *, retry_failed: bool = False) -> CampaignRecord:
    candidates = [c for c in campaigns.campaigns(campaign.name) if c.path == str(campaign.path)]
    if not candidates:
        raise DuetError(f"--resume: no earlier run of campaign {campaign.name!r} from {campaign.path} in the store",
                        hint="run it without --resume first, or point --db at the store it used")
    record = candidates[0]
    if record.status == "finished" and not retry_failed:
        raise DuetError(f"--resume: campaign {campaign.name!r} (#{record.id}) already finished",
                        hint="run it again without --resume to start a new campaign, or add --retry-failed to run "
                             "its failed runs again")
    sha = hashlib.sha256(campaign.source_text.encode()).hexdigest()
    if sha != record.source_sha256:
        raise DuetError(f"--resume: {campaign.path} changed since campaign #{record.id} started",
                        hint="restore the file as it was, or start a new campaign without --resume")
    return record


def choose_seed(opts: RunOptions, campaign: Campaign) -> int:
    """The command line's seed, else the campaign file's, else a fresh one (recorded with the campaign)."""
    if opts.seed is not None:
        return opts.seed
    if campaign.seed is not None:
        return campaign.seed
    return random.SystemRandom().randrange(2**31)


def _run_loop(campaign: Campaign, campaigns: CampaignStore, campaign_id: int, run_root: Path, opts: RunOptions,
              console: Console, note: str | None = None) -> RunLoop:
    """The per-run loop (`execute_plan`) bound to one store and campaign, as backends call it."""
    by_name = {b.name: b for b in campaign.benchmarks}

    def loop(runs: Sequence[PlannedRun], *, engine: ContainerEngine | None) -> str:
        done = campaigns.done_keys(campaign_id)
        return execute_plan(runs, done, by_name, campaigns, campaign_id, run_root, engine, opts, console, note=note)

    return loop


def worker_loop(campaign: Campaign, campaigns: CampaignStore, campaign_id: int, run_root: Path,
                run_options: Mapping[str, Any], db: Path | StoreLocation, console: Console, *, note: str) -> RunLoop:
    """The per-run loop for a backend's worker in another process (a Slurm task): the campaign's run
    options as the start-up path recorded them (`RunOptions.to_json`), every run stored with `note`."""
    return _run_loop(campaign, campaigns, campaign_id, run_root, RunOptions.from_json(run_options, db), console,
                     note=note)


def _print_cpu_sets(console: Console, campaign: Campaign) -> None:
    """What the plan's CPUs stand for, on this machine, in the benchmarks given several per command."""
    from duetbench.execute.backends.local import cpus_per_command
    from duetbench.host.doctor.sysroot import format_cpu_list
    from duetbench.plan.schedule import keyed_cpu_sets

    usable = usable_cpus()
    for bench in campaign.benchmarks:
        try:
            per = cpus_per_command(bench, usable)
        except DuetError:
            # more than this machine has: a cluster's nodes may (a local run refused it already)
            console.print(f"  {escape(bench.name)}: {bench.cpus_per_command} CPUs per command (cpus_per_command): "
                          "more than this machine has; each node checks its own", highlight=False)
            continue
        sets = keyed_cpu_sets(usable, per)
        if sets:
            said = ", ".join(f"{key} for {format_cpu_list(list(cpus))}" for key, cpus in sorted(sets.items()))
            console.print(f"  {escape(bench.name)}: {per} CPUs per command "
                          f"(cpus_per_command): the plan's CPU {said} here", highlight=False)


def run_campaign(path: Path, opts: RunOptions, console: Console, *, backend: str = "local",
                 settings: Mapping[str, Any] | None = None) -> int:
    """`duet run`: the campaign's one start-up path, then `backend` executes its planned runs."""
    campaign = read_campaign(path)
    executor = create_backend(backend, campaign, opts.executor, settings)
    cpus = executor.plan_cpus()
    seed = choose_seed(opts, campaign)
    for bench in campaign.benchmarks:
        bench_stopping(bench, opts)  # a bad combination of stopping settings is an error now, not mid-campaign
    requests = [RunRequest(b.name, dict(b.methods)) for b in campaign.benchmarks]

    if opts.dry_run and not opts.resume:
        plan = make_plan(requests, schedule=campaign.schedule, seed=seed, cpus=cpus)
        print_plan(console, campaign.name, seed, campaign.schedule, plan, artifact_commands(campaign))
        _print_cpu_sets(console, campaign)
        for bench in campaign.benchmarks:
            if campaign_auto.is_auto(bench):
                first = [p.position + 1 for p in plan if p.benchmark == bench.name][:3]
                console.print(f"  {escape(bench.name)}: method auto — runs {', '.join(map(str, first))} are its pilot "
                              "(a duet run, a sequential repetition); the other method's runs are then skipped",
                              highlight=False)
        console.print(executor.dry_run_text(plan), highlight=False)
        return 0
    if not opts.dry_run:
        executor.check()

    location = StoreLocation.parse(opts.db)
    store = Store(location)
    campaigns = CampaignStore(store)

    def job_for(campaign_id: int, uid: str, recorded: dict[str, Any], plan: list[PlannedRun], run_root: Path
                ) -> CampaignJob:
        return CampaignJob(campaign=campaign, campaign_id=campaign_id, uid=uid, recorded=recorded, plan=plan,
                           done=campaigns.done_keys(campaign_id), run_root=run_root, store=campaigns,
                           location=location, run_options=opts.to_json(),
                           loop=_run_loop(campaign, campaigns, campaign_id, run_root, opts, console),
                           console=console, progress=opts.progress)

    try:
        if opts.resume:
            record = find_resumable(campaigns, campaign, retry_failed=opts.retry_failed)
            _same_family(record, executor, campaign)
            if opts.seed is not None and opts.seed != record.seed:  # the plan it continues was drawn from its seed
                raise DuetError(f"--resume: campaign {campaign.name!r} (#{record.id}) was planned with seed "
                                f"{record.seed}, not {opts.seed}",
                                hint="drop --seed to continue it, or start a new campaign without --resume")
            if opts.retry_failed and not opts.dry_run:
                retried = campaigns.mark_retried(record.id)
                if not retried and record.status == "finished":
                    raise DuetError(f"--retry-failed: campaign {campaign.name!r} (#{record.id}) has no failed run",
                                    hint="nothing to do; run it again without --resume to start a new campaign")
            seed, plan = record.seed, [PlannedRun.from_json(p) for p in record.plan]
            job = job_for(record.id, record.uid, {k: getattr(record, k) for k in _RECORDED}, plan,
                          Path(record.run_dir))
            artifacts_due = bool(campaign.artifacts) and not record.artifacts
            executor.collect(job)
            job.done = campaigns.done_keys(job.campaign_id)
            if opts.dry_run and opts.retry_failed:  # what --retry-failed would run again, not marked yet
                job.done -= {r.key for r in campaigns.runs(record.id, with_iterations=False) if r.status == "failed"}
            if opts.dry_run:
                print_plan(console, campaign.name, seed, record.schedule, plan, artifact_commands(campaign), job.done)
                console.print(f"dry run: {len(job.todo)} of {len(plan)} runs left to {executor.verb}",
                              highlight=False)
                return 0
        # Before the campaign is recorded (or "running" again): a run that cannot write its outputs would
        # die mid-way and leave it so.
        outputs_writable(job.run_root if opts.resume else executor.run_root(location.parent, 0, "0" * 8).parent)
        with executor.reserve(f"duet run {campaign.name} ({campaign.path})"):
            # From the moment the campaign is (again) "running" in the store until SIGTERM and SIGHUP are
            # handled like Ctrl-C below, the three are held back: one that came in between would end duet
            # with the campaign left "running". Released under that handling, it ends as during the runs.
            # (Only the store's few writes are held up; a busy SQLite waits in C, not interruptible anyway.)
            held = hold_stop_signals()
            try:
                if opts.resume:
                    claim(store, "campaigns", job.campaign_id)
                    campaigns.set_status(job.campaign_id, "running")
                else:
                    plan = make_plan(requests, schedule=campaign.schedule, seed=seed, cpus=cpus)
                    uid = uuid.uuid4().hex
                    recorded: dict[str, Any] = dict(
                        name=campaign.name, path=str(campaign.path),
                        source_sha256=hashlib.sha256(campaign.source_text.encode()).hexdigest(),
                        source_text=campaign.source_text, seed=seed, schedule=campaign.schedule,
                        plan=[p.to_json() for p in plan], run_dir="",
                        options=with_owner({"executor": opts.executor, "confidence": opts.confidence,
                                            "n_resamples": opts.n_resamples, **executor.recorded_options()}),
                        host=host_facts(), tool_version=__version__)
                    campaign_id = campaigns.begin(**recorded, uid=uid)
                    run_root = executor.run_root(location.parent, campaign_id, uid)
                    recorded["run_dir"] = str(run_root)
                    campaigns.set_run_dir(campaign_id, str(run_root))
                    job = job_for(campaign_id, uid, recorded, plan, run_root)
                    artifacts_due = True
                campaign_id, run_root = job.campaign_id, job.run_root
                where = f" ({executor.name})" if executor.name != "local" else ""
                console.print(f"[bold]duet run[/bold] campaign [cyan]{escape(campaign.name)}[/cyan] "
                              f"#{campaign_id}{where}: {len(plan)} runs ({len(job.todo)} to go), schedule "
                              f"{campaign.schedule}, seed {seed}; results in {escape(str(location))}, raw outputs "
                              f"in {escape(str(run_root))}", highlight=False)
                # SIGTERM (a CI timeout, a scheduler) and SIGHUP are handled like Ctrl-C: stop the runs, keep what
                # finished.
                previous = stop_like_ctrl_c()
            except BaseException:
                release(held)
                raise
            try:
                release(held)  # a signal held back above is raised here, and ends the campaign "interrupted"
                # Under the interrupt handling: an artifact command may take long or hang. Recorded for a new
                # campaign, and on --resume for one interrupted before they were.
                if artifacts_due:
                    campaigns.set_artifacts(campaign_id, record_artifacts(campaign.artifacts, run_root / "artifacts"))
                outcome = executor.execute(job)
            except KeyboardInterrupt:
                # Ctrl-C between two runs (storing one, judging a stop rule) rather than inside one, which
                # the run loop turns into "interrupted" itself: the same ending, exports of what finished too.
                outcome = Outcome("interrupted")
            except DuetError:
                campaigns.set_status(campaign_id, "interrupted")  # --resume continues it
                raise
            finally:
                restore(previous)
            missing = sum(1 for p in plan if p.key not in campaigns.done_keys(campaign_id))
            status = outcome.status if outcome.status != "finished" or not missing else "interrupted"
            campaigns.set_status(campaign_id, status)
        resume = (f"duet run {escape(shlex.quote(str(path)))} --resume{escape(executor.resume_args())}"
                  f"{escape(db_argument(opts.db))}")
        by_name = {b.name: b for b in campaign.benchmarks}
        if outcome.status == "stopped":
            console.print(f"[yellow]stopped[/yellow] at the time budget: every finished run is stored; continue "
                          f"with [bold]{resume}[/bold]", highlight=False)
        if outcome.status == "interrupted":
            console.print(f"[yellow]interrupted[/yellow]: every finished run is stored; continue with "
                          f"[bold]{resume}[/bold]", highlight=False)
            if opts.exports:  # what finished, as `duet analyze` would export it now
                export_campaign(campaigns, campaign_id, summarize(campaigns, campaign_id, by_name, seed=seed,
                                                                  confidence=opts.confidence,
                                                                  n_resamples=opts.n_resamples), opts, seed=seed)
            return 130
        rows = summarize(campaigns, campaign_id, by_name, seed=seed, confidence=opts.confidence,
                         n_resamples=opts.n_resamples)
        exported = export_campaign(campaigns, campaign_id, rows, opts, seed=seed, printed=False)
        if rows:
            print_summary(console, rows, opts.confidence)
            print_stopping(console, campaigns, campaign_id)
        stored = campaigns.campaign(campaign_id)  # recorded above: None only if it were deleted meanwhile
        for name, choice in ((stored.options.get("auto") if stored else None) or {}).items():
            console.print(f"  {escape(name)}: method auto → {escape(choice['reason'])}", highlight=False)
            if choice.get("cpu_hint"):
                console.print(f"  {escape(name)}: note: {escape(choice['cpu_hint'])}", highlight=False)
        if exported is not None and opts.exports:  # `-`: after the closing table
            opts.exports.write(exported, files=False)
        failed = sum(r.runs_failed for r in rows)
        if failed:
            console.print(f"[yellow]{failed} run(s) failed[/yellow]; their exit codes and stderr are stored, raw "
                          f"outputs in {escape(str(run_root))}", highlight=False)
        if status == "interrupted":  # the backend finished, yet runs are missing (a worker did not finish)
            console.print(f"[yellow]{missing} planned run(s) are not stored[/yellow]"
                          + (f": {escape(outcome.detail)}" if outcome.detail else "")
                          + f"; {executor.verb} only those with [bold]{resume}[/bold]", highlight=False)
            return 1
        # As `duet compare` (and hyperfine) when a command fails: the campaign went on, but a CI step that ran
        # it must not look green while a benchmark never ran (--fail-if-slower's regressions exit 3 instead).
        return 1 if failed else 0
    finally:
        store.close()


#: The campaign's fields as recorded (`CampaignStore.begin`'s keyword arguments, uid apart).
_RECORDED = ("name", "path", "source_sha256", "source_text", "seed", "schedule", "plan", "run_dir", "options", "host",
             "tool_version")


def _same_family(record: CampaignRecord, executor: Backend, campaign: Campaign) -> None:
    """A campaign resumes with the kind of backend it began with: a Slurm campaign's runs are in its task
    databases and attempts, a local one's on this machine."""
    began = str(record.options.get("backend", "local"))
    if began != executor.family:
        raise DuetError(f"--resume: campaign {campaign.name!r} (#{record.id}) began with --backend {began}, "
                        f"not {executor.family}",
                        hint=f"resume it with --backend {began}" if began != "local" else
                        f"resume it without --backend {executor.name}")


# Live precision checks only steer stopping: fewer replicates than the final analysis.
LIVE_RESAMPLES = 2000


@dataclass(frozen=True)
class BenchStopping:
    warmup: StoppingParams | None
    runs: StoppingParams | None
    target_width: float | None
    min_runs: int


def bench_stopping(bench: BenchmarkSpec, opts: RunOptions) -> BenchStopping:
    """A benchmark's adaptive-measurement settings: the command line's where given (for every benchmark),
    else the campaign file's `stopping` (campaign, then benchmark)."""
    st = dict(getattr(bench, "stopping", {}) or {})

    def make(criterion: str | None, given: StoppingParams | None) -> StoppingParams | None:
        if given is not None:
            return given
        if criterion is None:
            return None
        try:
            return stopping_params(criterion, st)
        except DuetError as exc:
            raise DuetError(f"benchmark {bench.name}: stopping: {exc.message}", hint=exc.hint) from None

    cli_width = opts.target_width is not None
    return BenchStopping(
        warmup=make(st.get("warmup"), opts.warmup_params),
        runs=make(st.get("runs"), opts.run_params),
        target_width=opts.target_width if cli_width else st.get("target_width"),
        min_runs=opts.min_runs if cli_width or "min_runs" not in st else int(st["min_runs"]),
    )


def _stop_reason(campaigns: CampaignStore, campaign_id: int, bench: BenchmarkSpec, method: str, opts: RunOptions
                 ) -> str | None:
    """Why this benchmark's method may stop launching runs (precision reached, or its runs are stable)."""
    return _precision(campaigns, campaign_id, bench, method, opts) or _runs_stable(campaigns, campaign_id, bench,
                                                                                   method, opts)


def _runs_stable(campaigns: CampaignStore, campaign_id: int, bench: BenchmarkSpec, method: str, opts: RunOptions
                 ) -> str | None:
    """Run (fork) stopping of Laaber et al. 2020 §4.2.2: both sides' runs stable by the criterion (pair rule)."""
    run_params = bench_stopping(bench, opts).runs
    if run_params is None:
        return None
    table = iteration_table(campaigns, campaign_id)
    mine = discard_leading(table.where((table.benchmark == bench.name) & (table.method == method)),
                           rule=bench.warmup.discard).measured()
    a_runs, b_runs = ([x for x in mine.runs_of(side) if x.size] for side in ("A", "B"))
    if not a_runs or not b_runs:
        return None
    params = replace(run_params, f_max=max(campaign_auto.planned_runs(bench, method), run_params.f_min))
    decision = pair_run_stop(a_runs, b_runs, params, live=True)
    if decision.stop and decision.stable:
        return f"stopped early: both sides' runs are stable by {params.criterion} after {decision.runs} runs"
    return None


def _precision(campaigns: CampaignStore, campaign_id: int, bench: BenchmarkSpec, method: str, opts: RunOptions
               ) -> str | None:
    """Why this benchmark's method may stop launching runs (its ratio is precise enough), or None.

    Stopping on precision, never on significance: the rule looks at the CI's width only, not at whether
    it excludes 1, so it cannot inflate false alarms the way stopping at the first "significant" result
    does; and it judges the t interval at α/2, since stopping when the spread looks small biases the
    α one (analyze/monitor.py)."""
    settings = bench_stopping(bench, opts)
    if settings.target_width is None:
        return None
    target, min_runs = settings.target_width, settings.min_runs
    table = iteration_table(campaigns, campaign_id)
    mine = table.where(((table.benchmark == bench.name)
                        | np.char.startswith(table.benchmark.astype(str), bench.name + "/")) & (table.method == method))
    if not len(mine):
        return None
    sides = [np.unique(mine.run[mine.side == s]).size for s in ("A", "B")]
    if min(sides) < min_runs:
        return None
    rows = analyze_table(discard_leading(mine, rule=bench.warmup.discard),
                         AnalysisOptions(confidence_level=opts.confidence, n_resamples=LIVE_RESAMPLES,
                                         interval="t-stopped"),
                         sync=run_sync_statuses(campaigns.runs(campaign_id, with_iterations=False)))
    widths = [r.result.relative_ci_width for r in rows if r.result is not None]
    width = max(widths) if widths and len(widths) == len(rows) else math.nan
    decision = ratio_precision_stop(width, target, min(sides), min_runs,
                                    max(campaign_auto.planned_runs(bench, method), min_runs), 0.0, None)
    if decision.reason != "precision":
        return None
    return f"stopped early: the CI of B/A is {width:.2%} wide after {min(sides)} runs (target {target:.2%})"


def _skipped(run: PlannedRun, reason: str) -> RunRecord:
    now = time.time()
    return RunRecord(id=0, key=run.key, position=run.position, benchmark=run.benchmark, method=run.method,
                     repetition=run.repetition, launch_order="".join(run.sides), status="skipped", error=reason,
                     started=now, finished=now, run_dir="", clock="none", notes=[], sides={}, iterations=[])


def execute_plan(plan: Sequence[PlannedRun], done: set[str], by_name: Mapping[str, BenchmarkSpec],
                 campaigns: CampaignStore, campaign_id: int, run_root: Path, engine: ContainerEngine | None,
                 opts: RunOptions, console: Console, *, note: str | None = None) -> str:
    """Measure the runs of `plan` not in `done`, storing each as it finishes (with `note` added to its
    notes, e.g. which node measured it); "finished", "stopped" (time budget) or "interrupted"."""
    todo = [p for p in plan if p.key not in done]
    stopped: dict[tuple[str, str], str] = {}
    for bench in by_name.values():  # methods: {auto: N}, resumed: the choice made before (or now, if due)
        if campaign_auto.is_auto(bench):
            choice = campaign_auto.recorded(campaigns, campaign_id, bench) or campaign_auto.decide(
                campaigns, campaign_id, bench)
            if choice:
                stopped[(bench.name, campaign_auto.loser(choice))] = f"method auto chose {choice['method']}"
    if done:  # resuming: which methods were already precise or stable enough to stop?
        for bench in by_name.values():
            for method in METHOD_ORDER:
                reason = _stop_reason(campaigns, campaign_id, bench, method, opts)
                if reason:
                    stopped[(bench.name, method)] = reason
    t0 = time.monotonic()
    with CampaignProgress(console, total=len(plan), done=len(plan) - len(todo), enabled=opts.progress) as progress:
        for run in todo:
            bench = by_name[run.benchmark]
            if (run.benchmark, run.method) in stopped:
                why = stopped[(run.benchmark, run.method)]
                skipped = _skipped(run, why)
                campaigns.add_run(campaign_id, replace(skipped, notes=[note]) if note else skipped)
                progress.skipped(run, why if why.startswith("method auto") else "stopped early")
                continue
            if opts.time_budget is not None and time.monotonic() - t0 > opts.time_budget:
                console.print(f"time budget of {opts.time_budget:g} s used up; continue with --resume", highlight=False)
                return "stopped"
            progress.starting(run)
            suffix = f"-{run.sides[0]}" if run.method == "sequential" else ""
            run_dir = run_root / "runs" / run.benchmark / f"{run.method}-{run.repetition}{suffix}"
            if run_dir.exists():
                # Left by an attempt that was killed before it could be stored: keep its outputs aside
                # (nothing measured is thrown away) and start this attempt clean; the hooks append to logs.
                run_dir.rename(run_dir.with_name(f"{run_dir.name}.killed-{time.strftime('%Y%m%d-%H%M%S')}"))
            try:
                execution = execute_run(run, bench, run_dir, campaign_id=campaign_id, engine=engine,
                                        use_cgroups=opts.use_cgroups, show_output=opts.show_output,
                                        warmup_params=bench_stopping(bench, opts).warmup)
            except _Interrupted as stop:
                # Not stored: the run is incomplete and --resume runs it again; its outputs stay on disk.
                stamp = time.strftime("%Y%m%d-%H%M%S")
                stop.execution.run_dir.rename(stop.execution.run_dir.with_name(
                    stop.execution.run_dir.name + f".interrupted-{stamp}"))
                return "interrupted"
            except KeyboardInterrupt:
                return "interrupted"
            record = to_record(bench, execution)
            if note:
                record.notes.append(note)
            campaigns.add_run(campaign_id, record)
            progress.finished(run, record.status, record.error)
            if campaign_auto.is_auto(bench) and not any((bench.name, m) in stopped for m in AUTO_CANDIDATES):
                choice = campaign_auto.decide(campaigns, campaign_id, bench)
                if choice:
                    stopped[(bench.name, campaign_auto.loser(choice))] = f"method auto chose {choice['method']}"
                    progress.note(f"{bench.name} · method auto → {choice['reason']}")
            if record.status == "ok":
                reason = _stop_reason(campaigns, campaign_id, bench, run.method, opts)
                if reason:
                    stopped[(run.benchmark, run.method)] = reason
                    progress.note(f"{run.benchmark} · {run.method}: {reason}")
    return "finished"


def print_stopping(console: Console, campaigns: CampaignStore, campaign_id: int) -> None:
    """Which rule ended each phase: dynamic warmup per run (criterion, iteration, maximum reached) and
    early-stopped methods (precision reached after how many runs)."""
    runs = campaigns.runs(campaign_id, with_iterations=False)
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for r in runs:
        groups.setdefault((r.benchmark, r.method), []).append(r)
    for (bench, method), mine in groups.items():
        live = [r.adaptive_warmup for r in mine if r.adaptive_warmup is not None]
        if live:
            stable = [int(w["iteration"]) for w in live if w["outcome"] == "stable"]
            maxed = sum(w["outcome"] == "max" for w in live)
            text = (f"warmup ended by the criterion in {len(stable)} of {len(live)} runs"
                    + (f" (median {sorted(stable)[len(stable) // 2]} iterations)" if stable else "")
                    + (f"; [yellow]{maxed} reached the maximum without stability[/yellow]" if maxed else ""))
            console.print(f"  {escape(bench)} · {method}: {text}", highlight=False)
        early = [r.error for r in mine if r.status == "skipped"]
        if early:
            console.print(f"  {escape(bench)} · {method}: {escape(early[0])} ({len(early)} planned runs skipped)",
                          highlight=False)


def summarize(campaigns: CampaignStore, campaign_id: int, by_name: Mapping[str, BenchmarkSpec], *, seed: int,
              confidence: float, n_resamples: int) -> list[AnalysisRow]:
    """The closing table of `duet run`: `duet analyze`'s analysis with each benchmark's own warmup setting."""
    table = iteration_table(campaigns, campaign_id)
    runs = campaigns.runs(campaign_id, with_iterations=False)
    opts = AnalysisOptions(confidence_level=confidence, n_resamples=n_resamples, seed=seed)
    sync = run_sync_statuses(runs)
    rows = []
    for name, bench in by_name.items():
        # A harness run may hold several benchmarks (a JMH jar): the table names them "<name>/<inner>".
        mine = table.where((table.benchmark == name) | np.char.startswith(table.benchmark.astype(str), name + "/"))
        analysed = {(r.benchmark, r.method): r for r in analyze_table(discard_leading(mine, rule=bench.warmup.discard),
                                                                       opts, sync)}
        for method in METHOD_ORDER:
            stored = [r for r in runs if r.benchmark == name and r.method == method]
            # A failed run measured again (--retry-failed) is kept, and counted no more.
            stored = [r for r in stored if r.status != "retried"]
            if all(r.status in ("skipped", "pilot") for r in stored):  # none, or the method auto set aside
                continue
            ok, failed = run_counts(stored, name, method)
            found = [row for (b, m), row in analysed.items() if m == method]
            for row in found or [AnalysisRow(name, method, 0, 0, 0, None,
                                             problem="no finished run with measured iterations")]:
                # The duet's synchronization is stated with every result (a refusal states it as its problem);
                # the estimator's notes are `duet analyze`'s, not the closing summary's.
                said = [row.sync] if row.sync and row.sync != row.problem else []
                rows.append(msgspec.structs.replace(row, notes=said, runs_ok=ok, runs_failed=failed))
    name_noise(rows, runs)  # these rows are also the exported ones, as duet analyze's
    usable = len(usable_cpus())
    name_parallel(rows, runs, {name: cpus_given(b, usable) for name, b in by_name.items()}, usable)
    return rows


def export_campaign(campaigns: CampaignStore, campaign_id: int, rows: list[AnalysisRow], opts: RunOptions, *,
                    seed: int, printed: bool = True) -> CampaignReport | None:
    """Write `duet run`'s --export-FORMAT files, and print those to standard output unless `printed` is
    False (then the caller prints the report returned after its closing table): the closing table's rows,
    in `duet analyze`'s shape. None where nothing is exported."""
    if not opts.exports:
        return None
    from duetbench.report.campaign_context import campaign_commands, campaign_environment, campaign_facts
    from duetbench.report.model import CampaignReport

    record = campaigns.campaign(campaign_id)
    assert record is not None
    # The HTML report plots the iterations: loaded only when it is asked for.
    table = iteration_table(campaigns, campaign_id) if "html" in opts.exports.paths else None
    report = CampaignReport(
        campaign_id=campaign_id, name=record.name, rows=list(rows),
        meta={"campaign": campaign_id, "name": record.name,
              "options": {"seed": seed, "confidence": opts.confidence, "resamples": opts.n_resamples},
              **({"auto": record.options["auto"]} if record.options.get("auto") else {})},
        table=table, environment=campaign_environment(record), facts=campaign_facts(record),
        commands=campaign_commands(record) if table is not None else {}, source=record.source_text,
        status=record.status)
    opts.exports.write(report, printed=printed)
    return report
