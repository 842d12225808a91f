"""``duet run --backend slurm``: a campaign as a Slurm array job, one whole node per task.

The submitting host does what a local run does before measuring — load the campaign, make the RMIT
plan once, record it (with a stable uid) in ``--db`` — then divides the plan among the tasks of an
array job (``--exclusive``: a node measures one task at a time and nothing else) and follows it by
polling ``squeue``/``scontrol`` (not ``sbatch --wait``, which answers late, and not ``sacct``, which
needs slurmdbd), showing runs done and left from the stores with the same live view as a local run.

Each task (the hidden ``duet slurm-task``) executes its share with the local code path
(`campaign_session._execute`: the same `execute_run`, the same atomic store writes) into either the
shared PostgreSQL database or its own SQLite file ``tasks/K.db`` holding a copy of the campaign with
the same uid, which the submitting host merges into ``--db`` once the tasks end. ``--resume`` submits
only the runs that are missing (after merging what the tasks left), or follows a job still running.
"""
from __future__ import annotations

import hashlib
import os
import shlex
import signal
import sys
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape

from duetbench import __version__
from duetbench.analyze.stopping import StoppingParams
from duetbench.usecases.campaign import (
    RunOptions,
    artifact_commands,
    measured_cpus,
    container_engine,
    execute_plan,
    find_resumable,
    on_interrupt,
    read_campaign,
    print_stopping,
    record_artifacts,
    bench_stopping,
    export_campaign,
    summarize,
)
from duetbench.errors import DuetError
from duetbench.execute.lock import MeasurementLock
from duetbench.execute.slurm.client import UNSUCCESSFUL, SlurmClient, TaskState
from duetbench.execute.slurm.job import DB_ENV, Attempt, JobSpec
from duetbench.execute.slurm.split import split_plan
from duetbench.host.host import host_facts, usable_cpus
from duetbench.plan.campaign import PlannedRun, RunRequest, make_plan
from duetbench.plan.schedule import choose_cpus
from duetbench.report.campaign import CampaignProgress, print_plan, print_summary
from duetbench.store.campaigns import CampaignStore, RunRecord
from duetbench.store.db import Store
from duetbench.store.location import StoreLocation

#: Seconds between two looks at the queue and the stores: slurmctld answers squeue in milliseconds, and
#: the submitting host may be a node's neighbour (or, in tests, the node itself), so keep it rare.
POLL_INTERVAL = 1.0
#: After Ctrl-C: how long to wait for cancelled tasks to store what they finished before merging.
CANCEL_GRACE = 60.0


@dataclass
class SlurmOptions:
    partition: str | None = None
    #: slices: this many tasks (nodes at once); benchmark: at most this many tasks at once (None: no limit).
    nodes: int | None = None
    split: str = "slices"
    sbatch_args: list[str] = field(default_factory=list)
    #: A directory every node sees: job files, logs, raw outputs, per-task databases.
    shared_dir: Path | None = None
    poll_interval: float = POLL_INTERVAL


def _plan_cpus(campaign) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """The CPU pair written into the plan. Nodes may differ from the submitting host, so a task maps
    the pair onto its own node's (first to first, second to second); the host's pair is kept when it
    has one so that a plan shown by --dry-run reads like a local one."""
    try:
        return measured_cpus(campaign)
    except DuetError:
        return (0, 1)  # the submitting host may be small; the nodes decide


def _run_options_json(opts: RunOptions) -> dict[str, Any]:
    # The exports are written where the campaign was submitted (_summary), not by the tasks.
    data = {k: v for k, v in asdict(opts).items() if k not in ("db", "dry_run", "resume", "progress", "exports")}
    for key in ("warmup_params", "run_params"):
        if data[key] is not None:
            data[key] = dict(data[key])
    return data


def _run_options_from_json(data: dict[str, Any], db: str) -> RunOptions:
    values = dict(data)
    for key in ("warmup_params", "run_params"):
        if values.get(key) is not None:
            values[key] = StoppingParams(**values[key])
    where = StoreLocation.parse(db)
    return RunOptions(db=where.path if where.path is not None else where,  # type: ignore[arg-type]
                      progress=False, **values)


def _sbatch_argv(spec: JobSpec, attempt: Attempt, sopts: SlurmOptions, name: str) -> list[str]:
    array = f"0-{spec.tasks - 1}"
    if sopts.split == "benchmark" and sopts.nodes:
        array += f"%{sopts.nodes}"  # at most this many nodes measuring at once
    argv = [f"--array={array}", "--exclusive", "--nodes=1", "--ntasks=1", f"--job-name=duet-{name}",
            f"--output={attempt.path / 'logs' / '%a.out'}", "--open-mode=append", f"--chdir={Path.cwd()}"]
    if sopts.partition:
        argv.append(f"--partition={sopts.partition}")
    for arg in sopts.sbatch_args:
        argv += shlex.split(arg)
    return argv


def _write_script(attempt: Attempt, spec: JobSpec) -> Path:
    script = attempt.script()
    # Nothing secret in here: a PostgreSQL URL reaches the task through the job's environment.
    script.write_text(
        "#!/bin/sh\n"
        f"# duetbench: campaign {spec.campaign['name']} (uid {spec.uid}), attempt {spec.attempt}, "
        f"{spec.tasks} task(s); submitted by 'duet run --backend slurm'.\n"
        f"exec {shlex.quote(spec.python)} -m duetbench slurm-task {shlex.quote(str(attempt.path))} "
        '--task "${SLURM_ARRAY_TASK_ID:-0}"\n')
    script.chmod(0o755)
    return script


class _Stores:
    """Where the tasks' runs are visible while they run: the shared database, or each task's file."""

    def __init__(self, central: CampaignStore, campaign_id: int, uid: str, attempt: Attempt, spec: JobSpec) -> None:
        self.central, self.campaign_id, self.uid, self.attempt, self.spec = central, campaign_id, uid, attempt, spec
        self._task_stores: dict[int, tuple[Store, CampaignStore, int]] = {}

    def runs(self) -> list[RunRecord]:
        if self.spec.store == "postgresql":
            return self.central.runs(self.campaign_id, with_iterations=False)
        out: list[RunRecord] = []
        for task in range(self.spec.tasks):
            opened = self._open(task)
            if opened is not None:
                out += opened[1].runs(opened[2], with_iterations=False)
        return out

    def _open(self, task: int) -> tuple[Store, CampaignStore, int] | None:
        if task not in self._task_stores:
            # Only once the task says its copy of the campaign exists: opening earlier would race the
            # task's own creation of the file.
            if not self.attempt.status(task).get("campaign_id") or not self.attempt.task_db(task).exists():
                return None
            store = Store(self.attempt.task_db(task))
            campaigns = CampaignStore(store)
            record = campaigns.by_uid(self.uid)
            if record is None:
                store.close()
                return None
            self._task_stores[task] = (store, campaigns, record.id)
        return self._task_stores[task]

    def close(self) -> None:
        for store, _, _ in self._task_stores.values():
            store.close()
        self._task_stores.clear()


def _merge_attempts(attempts: list[Attempt], dest: Store, console: Console) -> None:
    """Fold the tasks' SQLite files into ``--db``: runs already there (same campaign uid, same run key)
    are not copied again, so merging twice, or after a resume, adds nothing twice."""
    sources = [p for a in attempts for p in sorted((a.path / "tasks").glob("*.db"))]
    if not sources:
        return
    try:
        from duetbench.store.merge import merge_databases
    except ImportError:
        raise DuetError("this duetbench has no store merge (duetbench.store.merge) to collect the tasks' results",
                        hint="update duetbench, or use a PostgreSQL --db that every task writes to") from None
    report = merge_databases(sources, dest)
    console.print(f"merged {len(sources)} task database(s) into {escape(str(dest.location))}"
                  + (f": {escape(str(report))}" if str(report) else ""), highlight=False)


@dataclass
class _Outcome:
    states: dict[int, TaskState]
    interrupted: bool


def _task_state(client: SlurmClient, spec: JobSpec, attempt: Attempt, task: int,
                queue: dict[int, TaskState] | None) -> TaskState:
    if queue is not None and task in queue:
        return queue[task]
    status = attempt.status(task)
    if queue is None:
        # slurmctld no longer knows the job (older than MinJobAge, or its state was reset): the task's
        # own status file is all there is. A task that never wrote "done" did not finish its share.
        if status.get("state") in ("finished", "stopped"):
            return TaskState(task, "COMPLETED", status.get("node", ""), "")
        return TaskState(task, "FAILED" if status else "CANCELLED", status.get("node", ""),
                         "gone from the queue without finishing")
    return TaskState(task, "PENDING", "", "")


def _follow(client: SlurmClient, spec: JobSpec, attempt: Attempt, stores: _Stores, plan: list[PlannedRun],
            done_before: set[str], opts: RunOptions, sopts: SlurmOptions, console: Console) -> _Outcome:
    by_key = {p.key: p for p in plan}
    seen = set(done_before)
    last: dict[int, str] = {}
    interrupted = False
    states: dict[int, TaskState] = {}
    previous = signal.signal(signal.SIGTERM, on_interrupt)
    try:
        with CampaignProgress(console, total=len(plan), done=len(seen & by_key.keys()),
                              enabled=opts.progress) as progress:
            while True:
                try:
                    queue = client.tasks(spec.job_id)
                    states = {k: _task_state(client, spec, attempt, k, queue) for k in range(spec.tasks)}
                    # Tasks that started are told before their runs, tasks that ended after them.
                    for task, state in states.items():
                        if last.get(task) != state.state and not state.terminal:
                            last[task] = state.state
                            _announce(progress, client, spec, attempt, state)
                    for record in sorted(stores.runs(), key=lambda r: r.finished):
                        if record.key in seen or record.key not in by_key:
                            continue
                        seen.add(record.key)
                        if record.status == "skipped":
                            progress.skipped(by_key[record.key])
                        else:
                            progress.finished(by_key[record.key], record.status, record.error)
                    for task, state in states.items():
                        if last.get(task) != state.state:
                            last[task] = state.state
                            _announce(progress, client, spec, attempt, state)
                    if all(s.terminal for s in states.values()):
                        return _Outcome(states, interrupted)
                    time.sleep(sopts.poll_interval)
                except KeyboardInterrupt:
                    if interrupted:
                        raise
                    interrupted = True
                    progress.note(f"cancelling job {spec.job_id}: finished runs are kept, the runs in progress "
                                  "are lost and run again by --resume")
                    client.cancel(spec.job_id)
                    _wait_terminal(client, spec, attempt)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _wait_terminal(client: SlurmClient, spec: JobSpec, attempt: Attempt) -> None:
    deadline = time.monotonic() + CANCEL_GRACE
    while time.monotonic() < deadline:
        queue = client.tasks(spec.job_id)
        if all(_task_state(client, spec, attempt, k, queue).terminal for k in range(spec.tasks)):
            return
        time.sleep(0.5)


def _announce(progress: CampaignProgress, client: SlurmClient, spec: JobSpec, attempt: Attempt,
              state: TaskState) -> None:
    where = f" on {state.node}" if state.node else ""
    runs = len(spec.shares[state.task])
    if state.state == "RUNNING":
        progress.note(f"task {state.task}{where}: running ({runs} runs)")
    elif state.state in UNSUCCESSFUL:
        details = client.task_details(spec.job_id, state.task)
        code = details.get("ExitCode", "")
        why = state.reason or details.get("Reason", "")
        text = f"task {state.task}{where}: {state.state}" + (f", exit code {code}" if code else "") + (
            f" ({why})" if why and why != "None" else "")
        progress.console.print(f"[red]{escape(text)}[/red] — log: {escape(str(attempt.log(state.task)))}",
                               soft_wrap=True, highlight=False)


def _submit(client: SlurmClient, location: StoreLocation, spec: JobSpec, run_dir: Path, sopts: SlurmOptions,
            console: Console) -> Attempt:
    attempt = Attempt.create(run_dir, spec)
    script = _write_script(attempt, spec)
    spec.sbatch_argv = _sbatch_argv(spec, attempt, sopts, spec.campaign["name"])
    extra_env = {DB_ENV: location.url.render_as_string(hide_password=False)} if location.is_server else {}
    spec.job_id = client.submit(spec.sbatch_argv, str(script), extra_env=extra_env)
    spec.submitted = time.time()
    attempt.write_spec(spec)
    console.print(f"submitted array job [bold]{spec.job_id}[/bold]: {spec.tasks} task(s), one whole node each "
                  f"({sum(len(s) for s in spec.shares)} runs); logs in {escape(str(attempt.path / 'logs'))}",
                  highlight=False)
    return attempt


def run_campaign_slurm(path: Path, opts: RunOptions, sopts: SlurmOptions, console: Console) -> int:
    campaign = read_campaign(path)
    location = StoreLocation.parse(opts.db)
    if sopts.split not in ("slices", "benchmark"):
        raise DuetError(f"--split {sopts.split!r} is not known", hint="use --split slices or --split benchmark")
    if sopts.nodes is not None and sopts.nodes < 1:
        raise DuetError(f"--nodes must be at least 1, got {sopts.nodes}", hint="e.g. --nodes 4")
    seed = opts.seed if opts.seed is not None else (
        campaign.seed if campaign.seed is not None else int.from_bytes(os.urandom(4), "big") % 2**31)
    for bench in campaign.benchmarks:
        bench_stopping(bench, opts)  # a bad combination of stopping settings is an error now, not on a node
    cpus = _plan_cpus(campaign)
    tasks = sopts.nodes or 1  # --split benchmark ignores it: one task per benchmark, --nodes at once

    if opts.dry_run and not opts.resume:
        plan = make_plan([RunRequest(b.name, dict(b.methods)) for b in campaign.benchmarks],
                         schedule=campaign.schedule, seed=seed, cpus=cpus)
        print_plan(console, campaign.name, seed, campaign.schedule, plan, artifact_commands(campaign))
        shares = split_plan(plan, tasks, sopts.split)
        console.print(f"dry run: nothing was submitted ({len(plan)} runs planned in {len(shares)} Slurm task(s) "
                      f"of {', '.join(str(len(s)) for s in shares)} runs)", highlight=False)
        return 0

    client = SlurmClient()
    client.check_available()
    store = Store(location)
    campaigns = CampaignStore(store)
    try:
        if opts.resume:
            record = find_resumable(campaigns, campaign)
            if record.options.get("backend") != "slurm":
                raise DuetError(f"--resume: campaign {campaign.name!r} (#{record.id}) ran on this machine, not "
                                "through Slurm", hint="resume it without --backend slurm")
            campaign_id, uid, run_dir = record.id, record.uid, Path(record.run_dir)
            plan = [PlannedRun.from_json(p) for p in record.plan]
            attempts = Attempt.all(run_dir)
            if attempts and attempts[-1].spec().job_id:
                last = attempts[-1]
                spec = last.spec()
                queue = client.tasks(spec.job_id)
                if any(not _task_state(client, spec, last, k, queue).terminal for k in range(spec.tasks)):
                    console.print(f"job {spec.job_id} of campaign #{campaign_id} is still in the queue: "
                                  "following it", highlight=False)
                    return _finish(client, spec, last, store, campaigns, campaign_id, plan, campaign, opts, sopts,
                                   console, path, seed=record.seed)
            if not location.is_server:
                _merge_attempts(attempts, store, console)
            done = campaigns.done_keys(campaign_id)
            todo = [p for p in plan if p.key not in done]
            if opts.dry_run:
                print_plan(console, campaign.name, record.seed, record.schedule, plan, artifact_commands(campaign), done)
                console.print(f"dry run: {len(todo)} of {len(plan)} runs left to submit", highlight=False)
                return 0
            if not todo:
                console.print(f"campaign #{campaign_id}: every planned run is stored; nothing to submit",
                              highlight=False)
                campaigns.set_status(campaign_id, "finished")
                return _summary(campaigns, campaign_id, campaign, opts, console, seed=record.seed, missing=0,
                                failed_tasks=[], path=path, interrupted=False)
            campaigns.set_status(campaign_id, "running")
            attempt_no = (int(attempts[-1].path.name.split("-")[1]) + 1) if attempts else 1
            campaign_fields = {k: getattr(record, k) for k in ("name", "path", "source_sha256", "source_text",
                                                                "seed", "schedule", "plan", "run_dir", "options",
                                                                "host", "tool_version")}
            seed = record.seed
        else:
            plan = make_plan([RunRequest(b.name, dict(b.methods)) for b in campaign.benchmarks],
                             schedule=campaign.schedule, seed=seed, cpus=cpus)
            todo, uid, attempt_no = plan, uuid.uuid4().hex, 1
            shared = (sopts.shared_dir or location.parent).resolve()
            run_dir = shared / "campaigns" / f"slurm-{uid[:8]}-{campaign.name}"
            campaign_fields = dict(
                name=campaign.name, path=str(campaign.path),
                source_sha256=hashlib.sha256(campaign.source_text.encode()).hexdigest(),
                source_text=campaign.source_text, seed=seed, schedule=campaign.schedule,
                plan=[p.to_json() for p in plan], run_dir=str(run_dir),
                options={"executor": opts.executor, "confidence": opts.confidence, "n_resamples": opts.n_resamples,
                         "backend": "slurm", "split": sopts.split, "nodes": sopts.nodes},
                host=host_facts(), tool_version=__version__)
            campaign_id = campaigns.begin(**campaign_fields, uid=uid)
            campaigns.set_artifacts(campaign_id, record_artifacts(campaign.artifacts, run_dir / "artifacts"))
        shares = split_plan(todo, tasks, sopts.split)
        spec = JobSpec(uid=uid, attempt=attempt_no, campaign=campaign_fields,
                       store="postgresql" if location.is_server else "sqlite", db_label=str(location),
                       shares=[[p.key for p in share] for share in shares], run_options=_run_options_json(opts),
                       plan_cpus=list(cpus), python=sys.executable)
        console.print(f"[bold]duet run[/bold] campaign [cyan]{escape(campaign.name)}[/cyan] #{campaign_id} on Slurm: "
                      f"{len(plan)} runs ({len(todo)} to go), schedule {campaign.schedule}, seed {seed}; "
                      f"results in {escape(str(location))}, raw outputs in {escape(str(run_dir))}",
                      highlight=False)
        try:
            attempt = _submit(client, location, spec, run_dir, sopts, console)
        except DuetError:
            campaigns.set_status(campaign_id, "interrupted")  # nothing submitted: --resume submits it all
            raise
        return _finish(client, spec, attempt, store, campaigns, campaign_id, plan, campaign, opts, sopts, console,
                       path, seed=seed)
    finally:
        store.close()


def _finish(client: SlurmClient, spec: JobSpec, attempt: Attempt, store: Store, campaigns: CampaignStore,
            campaign_id: int, plan: list[PlannedRun], campaign, opts: RunOptions, sopts: SlurmOptions,  # type: ignore[no-untyped-def]
            console: Console, path: Path, *, seed: int) -> int:
    done_before = campaigns.done_keys(campaign_id)
    stores = _Stores(campaigns, campaign_id, spec.uid, attempt, spec)
    try:
        outcome = _follow(client, spec, attempt, stores, plan, done_before, opts, sopts, console)
    finally:
        stores.close()
    if spec.store == "sqlite":
        _merge_attempts([attempt], store, console)
    done = campaigns.done_keys(campaign_id)
    missing = sum(1 for p in plan if p.key not in done)
    failed = [s for s in outcome.states.values() if s.state in UNSUCCESSFUL]
    campaigns.set_status(campaign_id, "finished" if not missing else "interrupted")
    return _summary(campaigns, campaign_id, campaign, opts, console, seed=seed, missing=missing, failed_tasks=failed,
                    path=path, interrupted=outcome.interrupted)


def _summary(campaigns: CampaignStore, campaign_id: int, campaign, opts: RunOptions, console: Console, *,  # type: ignore[no-untyped-def]
             seed: int, missing: int, failed_tasks: list[TaskState], path: Path, interrupted: bool) -> int:
    by_name = {b.name: b for b in campaign.benchmarks}
    rows = summarize(campaigns, campaign_id, by_name, seed=seed, confidence=opts.confidence,
                     n_resamples=opts.n_resamples)
    export_campaign(campaigns, campaign_id, rows, opts, seed=seed)
    if rows:
        print_summary(console, rows, opts.confidence)
        print_stopping(console, campaigns, campaign_id)
    failed_runs = sum(r.runs_failed for r in rows)
    if failed_runs:
        console.print(f"[yellow]{failed_runs} run(s) failed[/yellow]; their exit codes and stderr are stored",
                      highlight=False)
    if missing:
        tasks = ", ".join(f"{t.task} ({t.state.lower()})" for t in failed_tasks)
        console.print(f"[yellow]{missing} planned run(s) are not stored[/yellow]"
                      + (f": task(s) {escape(tasks)} did not finish" if tasks else "")
                      + f"; submit only those with [bold]duet run {escape(str(path))} --backend slurm --resume"
                        "[/bold]", highlight=False)
        return 130 if interrupted else 1
    return 0


# -- the task, on a compute node --------------------------------------------------------------------


class _NodeCampaignStore(CampaignStore):
    """The campaign store as a task uses it: every run it stores says which node and job measured it
    (the campaign's host facts describe the submitting host, not the nodes)."""

    def __init__(self, store: Store, note: str) -> None:
        super().__init__(store)
        self._note = note

    def add_run(self, campaign_id: int, run: RunRecord) -> int:
        return super().add_run(campaign_id, replace(run, notes=[*run.notes, self._note]))


def _acquire_waiting(lock: MeasurementLock, console: Console, poll: float = 2.0) -> None:
    """Take the machine lock, waiting for it: Slurm gave this task the whole node, so whoever holds it
    is a measurement outside Slurm's knowledge (or, on a test box, another "node" of the same machine)."""
    told = False
    while True:
        try:
            lock.acquire()
            return
        except DuetError as exc:
            if not exc.message.startswith("another measurement"):
                raise
            if not told:
                console.print(f"waiting for the machine: {exc.message}", highlight=False)
                told = True
            time.sleep(poll)


def _node_cpus(plan_cpus: list[int]) -> dict[int, int]:
    pair = choose_cpus(usable_cpus())
    if pair is None:
        return {}
    return {plan_cpus[0]: pair[0], plan_cpus[1]: pair[1]}


def run_task(attempt_dir: Path, task: int, console: Console) -> int:
    attempt = Attempt(attempt_dir.resolve())
    spec = attempt.spec()
    if not 0 <= task < spec.tasks:
        raise DuetError(f"task {task} is not part of {attempt.path} (it has tasks 0–{spec.tasks - 1})",
                        hint="the array job and its job.json disagree: resubmit with --resume")
    node = os.environ.get("SLURMD_NODENAME") or os.uname().nodename
    job = f"{os.environ.get('SLURM_ARRAY_JOB_ID', spec.job_id)}_{task}"
    attempt.write_status(task, state="starting", node=node, job=job, pid=os.getpid(), started=time.time())
    try:
        code, state = _run_share(attempt, spec, task, node, job, console)
    except BaseException as exc:
        attempt.write_status(task, state="failed", error=str(exc) or type(exc).__name__, finished=time.time())
        raise
    attempt.write_status(task, state=state, finished=time.time())
    return code


def _run_share(attempt: Attempt, spec: JobSpec, task: int, node: str, job: str, console: Console) -> tuple[int, str]:
    campaign = read_campaign(Path(spec.campaign["path"]))
    sha = hashlib.sha256(campaign.source_text.encode()).hexdigest()
    if sha != spec.campaign["source_sha256"]:
        raise DuetError(f"{campaign.path} changed since the campaign was submitted",
                        hint="restore the file as it was, or start a new campaign")
    if spec.store == "postgresql":
        db = os.environ.get(DB_ENV)
        if not db:
            raise DuetError(f"the job's environment has no {DB_ENV} (the PostgreSQL URL)",
                            hint="do not pass --export=NONE to sbatch; or add it: --sbatch-arg=--export=ALL")
    else:
        db = str(attempt.task_db(task))
    opts = _run_options_from_json(spec.run_options, db)
    store = Store(db)
    try:
        campaigns = _NodeCampaignStore(store, f"slurm: job {job} on node {node}")
        record = campaigns.by_uid(spec.uid)
        if record is None:
            if spec.store == "postgresql":
                raise DuetError(f"campaign {spec.uid} is not in {store.location}",
                                hint="the task must write to the database the campaign was submitted with")
            campaign_id = campaigns.begin(**spec.campaign, uid=spec.uid)
        else:
            campaign_id = record.id
        attempt.write_status(task, campaign_id=campaign_id, host=host_facts())
        mapping = _node_cpus(spec.plan_cpus)
        keyed = {r.key: r for r in (PlannedRun.from_json(p) for p in spec.campaign["plan"])}
        share = [replace(keyed[k], cpus={s: mapping.get(c, c) for s, c in keyed[k].cpus.items()})
                 for k in spec.shares[task]]
        done = campaigns.done_keys(campaign_id)
        engine = container_engine(campaign, opts.executor)
        by_name = {b.name: b for b in campaign.benchmarks}
        run_root = Path(spec.campaign["run_dir"])
        console.print(f"duet slurm-task: campaign {campaign.name} (uid {spec.uid}), task {task} on {node}: "
                      f"{len(share)} runs, {len([r for r in share if r.key not in done])} to go", highlight=False)
        lock = MeasurementLock(f"duet slurm-task {campaign.name} task {task} (job {job})")
        _acquire_waiting(lock, console)
        attempt.write_status(task, state="running")
        previous = signal.signal(signal.SIGTERM, on_interrupt)  # scancel: stop like Ctrl-C, keep what finished
        try:
            status = execute_plan(share, done, by_name, campaigns, campaign_id, run_root, engine, opts, console)
        finally:
            signal.signal(signal.SIGTERM, previous)
            lock.release()
        stored = len(campaigns.done_keys(campaign_id) & set(spec.shares[task]))
        attempt.write_status(task, stored=stored)
        console.print(f"duet slurm-task: {status}; {stored} of {len(share)} runs of this task stored",
                      highlight=False)
        if status == "interrupted":
            return 130, "interrupted"
        return 0, "finished" if status == "finished" else "stopped"
    finally:
        store.close()


@click.command("slurm-task", hidden=True)
@click.argument("attempt_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--task", type=int, required=True, help="The array task index (SLURM_ARRAY_TASK_ID).")
def slurm_task(attempt_dir: Path, task: int) -> None:
    """Run one Slurm array task's share of a campaign (started by the job that `duet run --backend slurm`
    submits; not for direct use)."""
    sys.exit(run_task(attempt_dir, task, Console(highlight=False)))
