"""``duet run --backend slurm``: the planned runs as a Slurm array job, one whole node per task.

The start-up path (usecases/campaign.py) has recorded the campaign and its plan (with a stable uid)
in ``--db``; this backend divides the runs left among the tasks of an array job (``--exclusive``: a
node measures one task at a time and nothing else) and follows it by polling ``squeue``/``scontrol``
(not ``sbatch --wait``, which answers late, and not ``sacct``, which needs slurmdbd), showing runs
done and left from the stores with the same live view as a local run.

Each task (``duet slurm-task``, task.py) executes its share with the campaign's own per-run loop into
either the shared PostgreSQL database or its own SQLite file ``tasks/K.db`` holding a copy of the
campaign with the same uid, which this backend merges into ``--db`` once the tasks end. Resuming, it
merges what earlier attempts left and submits only the runs that are missing, or follows a job still
running.
"""
from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.console import Console
from rich.markup import escape

from duetbench.errors import DuetError
from duetbench.execute.backends.base import Backend, CampaignJob, Outcome
from duetbench.execute.backends.local import measured_cpus
from duetbench.execute.backends.slurm.client import UNSUCCESSFUL, SlurmClient, TaskState
from duetbench.execute.backends.slurm.job import DB_ENV, Attempt, JobSpec
from duetbench.execute.backends.slurm.split import SPLITS, split_plan
from duetbench.plan.campaign import PlannedRun
from duetbench.report.campaign import CampaignProgress
from duetbench.store.campaigns import CampaignStore, RunRecord
from duetbench.store.db import Store
from duetbench.store.location import StoreLocation

if TYPE_CHECKING:
    from duetbench.config.campaign_model import Campaign

#: Seconds between two looks at the queue and the stores: slurmctld answers squeue in milliseconds, and
#: the submitting host may be a node's neighbour (or, in tests, the node itself), so keep it rare.
POLL_INTERVAL = 1.0
#: After Ctrl-C: how long to wait for cancelled tasks to store what they finished before merging.
CANCEL_GRACE = 60.0


class SlurmBackend(Backend):
    """Settings (`duet run` options): partition, nodes (slices: this many tasks; benchmark: at most this
    many at once), split ("slices" | "benchmark"), sbatch_args, shared_dir (a directory every node
    sees: job files, logs, raw outputs, per-task databases), poll_interval."""

    name: ClassVar[str] = "slurm"
    family: ClassVar[str] = "slurm"
    verb: ClassVar[str] = "submit"

    def __init__(self, campaign: Campaign, executor: str, settings: Mapping[str, Any]) -> None:
        super().__init__(campaign, executor, settings)
        self.partition: str | None = settings.get("partition")
        self.nodes: int | None = settings.get("nodes")
        self.split: str = settings.get("split") or "slices"
        self.sbatch_args: list[str] = list(settings.get("sbatch_args") or ())
        shared = settings.get("shared_dir")
        self.shared_dir: Path | None = Path(shared) if shared is not None else None
        self.poll_interval = float(settings.get("poll_interval", POLL_INTERVAL))
        if self.split not in SPLITS:
            raise DuetError(f"--split {self.split!r} is not known", hint="use --split slices or --split benchmark")
        if self.nodes is not None and self.nodes < 1:
            raise DuetError(f"--nodes must be at least 1, got {self.nodes}", hint="e.g. --nodes 4")
        for bench in campaign.benchmarks:
            if "auto" in bench.methods:
                # The choice needs the pilot measured before the other runs start; array tasks run at once.
                raise DuetError(f"benchmark {bench.name}: methods: auto (the default when none are named) is not "
                                "available on Slurm (its pilot must finish before the other runs start, and "
                                "array tasks run in parallel)",
                                hint="name the methods, e.g. methods: {duet: 10}; `duet run` on one machine can "
                                     "choose")
        self.client = SlurmClient()
        self._cpus: tuple[int, int] | None = None
        self._following: tuple[JobSpec, Attempt] | None = None

    @property
    def tasks(self) -> int:
        return self.nodes or 1  # --split benchmark ignores it: one task per benchmark, --nodes at once

    def plan_cpus(self) -> tuple[int, int]:
        """The CPU pair written into the plan. Nodes may differ from the submitting host, so a task maps
        the pair onto its own node's (first to first, second to second); the host's pair is kept when it
        has one so that a plan shown by --dry-run reads like a local one."""
        try:
            self._cpus = measured_cpus(self.campaign)
        except DuetError:
            self._cpus = (0, 1)  # the submitting host may be small; the nodes decide
        return self._cpus

    def dry_run_text(self, plan: Sequence[PlannedRun]) -> str:
        shares = split_plan(plan, self.tasks, self.split)
        return (f"dry run: nothing was submitted ({len(plan)} runs planned in {len(shares)} Slurm task(s) "
                f"of {', '.join(str(len(s)) for s in shares)} runs)")

    def check(self) -> None:
        self.client.check_available()

    def run_root(self, store_dir: Path, campaign_id: int, uid: str) -> Path:
        shared = (self.shared_dir or store_dir).resolve()
        return shared / "campaigns" / f"slurm-{uid[:8]}-{self.campaign.name}"

    def recorded_options(self) -> dict[str, Any]:
        return {"backend": self.family, "split": self.split, "nodes": self.nodes}

    def collect(self, job: CampaignJob) -> None:
        attempts = Attempt.all(job.run_root)
        if attempts and attempts[-1].spec().job_id:
            last = attempts[-1]
            spec = last.spec()
            queue = self.client.tasks(spec.job_id)
            if any(not _task_state(spec, last, k, queue).terminal for k in range(spec.tasks)):
                self._following = (spec, last)  # its tasks will store their runs: submit nothing again
                return
        if not job.location.is_server:
            _merge_attempts(attempts, job.store.store, job.console)

    def execute(self, job: CampaignJob) -> Outcome:
        if self._following is not None:
            spec, attempt = self._following
            job.console.print(f"job {spec.job_id} of campaign #{job.campaign_id} is still in the queue: "
                              "following it", highlight=False)
        else:
            todo = job.todo
            if not todo:
                job.console.print(f"campaign #{job.campaign_id}: every planned run is stored; nothing to submit",
                                  highlight=False)
                return Outcome("finished")
            attempts = Attempt.all(job.run_root)
            attempt_no = (int(attempts[-1].path.name.split("-")[1]) + 1) if attempts else 1
            shares = split_plan(todo, self.tasks, self.split)
            cpus = self._cpus or self.plan_cpus()
            spec = JobSpec(uid=job.uid, attempt=attempt_no, campaign=job.recorded,
                           store="postgresql" if job.location.is_server else "sqlite", db_label=str(job.location),
                           shares=[[p.key for p in share] for share in shares], run_options=job.run_options,
                           plan_cpus=list(cpus), python=sys.executable)
            attempt = self._submit(job.location, spec, job.run_root, job.console)
        stores = _Stores(job.store, job.campaign_id, spec.uid, attempt, spec)
        try:
            states, interrupted = self._follow(spec, attempt, stores, job)
        finally:
            stores.close()
        if spec.store == "sqlite":
            _merge_attempts([attempt], job.store.store, job.console)
        failed = [s for s in states.values() if s.state in UNSUCCESSFUL]
        detail = ("task(s) " + ", ".join(f"{t.task} ({t.state.lower()})" for t in failed) + " did not finish"
                  if failed else "")
        return Outcome("interrupted" if interrupted else "finished", detail)

    def _submit(self, location: StoreLocation, spec: JobSpec, run_dir: Path, console: Console) -> Attempt:
        attempt = Attempt.create(run_dir, spec)
        script = _write_script(attempt, spec)
        spec.sbatch_argv = self._sbatch_argv(spec, attempt, spec.campaign["name"])
        extra_env = {DB_ENV: location.url.render_as_string(hide_password=False)} if location.is_server else {}
        spec.job_id = self.client.submit(spec.sbatch_argv, str(script), extra_env=extra_env)
        spec.submitted = time.time()
        attempt.write_spec(spec)
        console.print(f"submitted array job [bold]{spec.job_id}[/bold]: {spec.tasks} task(s), one whole node each "
                      f"({sum(len(s) for s in spec.shares)} runs); logs in {escape(str(attempt.path / 'logs'))}",
                      highlight=False)
        return attempt

    def _sbatch_argv(self, spec: JobSpec, attempt: Attempt, name: str) -> list[str]:
        array = f"0-{spec.tasks - 1}"
        if self.split == "benchmark" and self.nodes:
            array += f"%{self.nodes}"  # at most this many nodes measuring at once
        argv = [f"--array={array}", "--exclusive", "--nodes=1", "--ntasks=1", f"--job-name=duet-{name}",
                f"--output={attempt.path / 'logs' / '%a.out'}", "--open-mode=append", f"--chdir={Path.cwd()}"]
        if self.partition:
            argv.append(f"--partition={self.partition}")
        for arg in self.sbatch_args:
            argv += shlex.split(arg)
        return argv

    def _follow(self, spec: JobSpec, attempt: Attempt, stores: _Stores, job: CampaignJob
                ) -> tuple[dict[int, TaskState], bool]:
        """Poll until every task ended; Ctrl-C (or SIGTERM) cancels the job and waits for its tasks.
        Returns the tasks' last states and whether it was interrupted."""
        by_key = {p.key: p for p in job.plan}
        seen = set(job.store.done_keys(job.campaign_id))
        last: dict[int, str] = {}
        interrupted = False
        states: dict[int, TaskState] = {}
        with CampaignProgress(job.console, total=len(job.plan), done=len(seen & by_key.keys()),
                              enabled=job.progress) as progress:
            while True:
                try:
                    queue = self.client.tasks(spec.job_id)
                    states = {k: _task_state(spec, attempt, k, queue) for k in range(spec.tasks)}
                    # Tasks that started are told before their runs, tasks that ended after them.
                    for task, state in states.items():
                        if last.get(task) != state.state and not state.terminal:
                            last[task] = state.state
                            self._announce(progress, spec, attempt, state)
                    for record in sorted(stores.runs(), key=lambda r: r.finished):
                        if record.key in seen or record.key not in by_key:
                            continue
                        seen.add(record.key)
                        if record.status == "skipped":
                            progress.skipped(by_key[record.key], "stopped early")
                        else:
                            progress.finished(by_key[record.key], record.status, record.error)
                    for task, state in states.items():
                        if last.get(task) != state.state:
                            last[task] = state.state
                            self._announce(progress, spec, attempt, state)
                    if all(s.terminal for s in states.values()):
                        return states, interrupted
                    time.sleep(self.poll_interval)
                except KeyboardInterrupt:
                    if interrupted:
                        raise
                    interrupted = True
                    progress.note(f"cancelling job {spec.job_id}: finished runs are kept, the runs in progress "
                                  "are lost and run again by --resume")
                    self.client.cancel(spec.job_id)
                    self._wait_terminal(spec, attempt)

    def _wait_terminal(self, spec: JobSpec, attempt: Attempt) -> None:
        deadline = time.monotonic() + CANCEL_GRACE
        while time.monotonic() < deadline:
            queue = self.client.tasks(spec.job_id)
            if all(_task_state(spec, attempt, k, queue).terminal for k in range(spec.tasks)):
                return
            time.sleep(0.5)

    def _announce(self, progress: CampaignProgress, spec: JobSpec, attempt: Attempt, state: TaskState) -> None:
        where = f" on {state.node}" if state.node else ""
        runs = len(spec.shares[state.task])
        if state.state == "RUNNING":
            progress.note(f"task {state.task}{where}: running ({runs} runs)")
        elif state.state in UNSUCCESSFUL:
            details = self.client.task_details(spec.job_id, state.task)
            code = details.get("ExitCode", "")
            why = state.reason or details.get("Reason", "")
            text = f"task {state.task}{where}: {state.state}" + (f", exit code {code}" if code else "") + (
                f" ({why})" if why and why != "None" else "")
            progress.console.print(f"[red]{escape(text)}[/red] — log: {escape(str(attempt.log(state.task)))}",
                                   soft_wrap=True, highlight=False)


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
    from duetbench.store.merge import merge_databases

    report = merge_databases(sources, dest)
    console.print(f"merged {len(sources)} task database(s) into {escape(str(dest.location))}"
                  + (f": {escape(str(report))}" if str(report) else ""), highlight=False)


def _task_state(spec: JobSpec, attempt: Attempt, task: int, queue: dict[int, TaskState] | None) -> TaskState:
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
