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

import contextlib
import shlex
import signal
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
from duetbench.usecases.interrupts import hold_stop_signals, release

if TYPE_CHECKING:
    from duetbench.config.campaign_model import Campaign

#: Seconds between two looks at the queue and the stores: slurmctld answers squeue in milliseconds, and
#: the submitting host may be a node's neighbour (or, in tests, the node itself), so keep it rare.
POLL_INTERVAL = 1.0
#: After Ctrl-C: how long to wait for cancelled tasks to store what they finished before merging.
CANCEL_GRACE = 60.0
#: How long squeue may go on failing before duet stops following the job (which goes on regardless): a
#: busy or restarting slurmctld answers "Socket timed out on send/recv operation" for a while.
QUEUE_PATIENCE = 300.0


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
        self.sbatch_args: list[str] = []
        self._given_sbatch_args: list[str] = list(settings.get("sbatch_args") or ())
        for arg in self._given_sbatch_args:
            try:  # split now: a bad one must be refused before the campaign is recorded, not at submission
                self.sbatch_args += shlex.split(arg)
            except ValueError as exc:
                raise DuetError(f"--sbatch-arg {arg!r}: {str(exc).lower()}",
                                hint="balance its quotes: each --sbatch-arg is split into words as a shell "
                                     "would") from None
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

    def resume_args(self) -> str:
        # The submission options as given: the runs left must go to the same partition, with the same
        # --time and --account, split the same way (a resume records none of them).
        args = ["--backend", "slurm"]
        if self.nodes is not None:
            args += ["--nodes", str(self.nodes)]
        if self.split != "slices":
            args += ["--split", self.split]
        if self.partition:
            args += ["--partition", self.partition]
        args += [f"--sbatch-arg={arg}" for arg in self._given_sbatch_args]
        return " " + shlex.join(args)

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
        held: set[signal.Signals | int] | None = None
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
            # Ctrl-C while sbatch submits would leave a job whose id nobody wrote down, measuring the runs the
            # next --resume submits again: held back until the id is in job.json, then it cancels the job.
            held = hold_stop_signals()
            try:
                attempt = self._submit(job.location, spec, job.run_root, job.console)
            except BaseException:
                release(held)
                raise
        stores = _Stores(job.store, job.campaign_id, spec.uid, attempt, spec)
        # A dropped ssh session (SIGHUP) ends the following, not the job: it goes on, and --resume
        # follows it again. (Ctrl-C and SIGTERM still cancel it. nohup's ignored SIGHUP stays ignored.)
        hangup = signal.getsignal(signal.SIGHUP)
        if hangup is not signal.SIG_IGN:
            signal.signal(signal.SIGHUP, _hung_up)
        try:
            states, interrupted = self._follow(spec, attempt, stores, job, held)
        except KeyboardInterrupt:
            if spec.store == "sqlite":  # a second Ctrl-C: what the tasks stored so far belongs in --db all the same
                _merge_attempts([attempt], job.store.store, job.console)
            raise
        except _HungUp:
            with contextlib.suppress(OSError):  # the terminal may be gone
                job.console.print(f"hung up (SIGHUP): stopped following job {spec.job_id}, which goes on; "
                                  "--resume follows it and collects its runs", highlight=False)
            return Outcome("interrupted")
        finally:
            signal.signal(signal.SIGHUP, hangup)
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
                # sbatch expands %-patterns in --output (%a: the task): a % of the path itself is %%.
                f"--output={str(attempt.path / 'logs').replace('%', '%%')}/%a.out", "--open-mode=append",
                f"--chdir={Path.cwd()}"]
        if self.partition:
            argv.append(f"--partition={self.partition}")
        return argv + self.sbatch_args

    def _follow(self, spec: JobSpec, attempt: Attempt, stores: _Stores, job: CampaignJob,
                held: set[signal.Signals | int] | None) -> tuple[dict[int, TaskState], bool]:
        """Poll until every task ended; Ctrl-C (or SIGTERM) cancels the job and waits for its tasks.
        `held`: the signal mask to restore, stop signals having been held back while submitting.
        Returns the tasks' last states and whether it was interrupted."""
        by_key = {p.key: p for p in job.plan}
        seen = set(job.store.done_keys(job.campaign_id))
        last: dict[int, str] = {}
        interrupted = False
        states: dict[int, TaskState] = {}
        failing_since: float | None = None  # squeue has failed since then
        with CampaignProgress(job.console, total=len(job.plan), done=len(seen & by_key.keys()),
                              enabled=job.progress) as progress:
            while True:
                try:
                    if held is not None:
                        mask, held = held, None
                        release(mask)  # a Ctrl-C held back while submitting is handled here, as any other
                    try:
                        queue = self.client.tasks(spec.job_id)
                    except DuetError as exc:
                        failing_since = self._queue_failed(exc, failing_since, spec, progress)
                        time.sleep(self.poll_interval)
                        continue
                    if failing_since is not None:
                        failing_since = None
                        progress.note("squeue answers again")
                    states = {k: _task_state(spec, attempt, k, queue) for k in range(spec.tasks)}
                    # Tasks that started are told before their runs, tasks that ended after them.
                    waiting: dict[str, list[int]] = {}  # what to say about pending tasks → which
                    for task, state in states.items():
                        if last.get(task) != _told(state) and not state.terminal:
                            before, last[task] = last.get(task, ""), _told(state)
                            if state.state == "PENDING":
                                waiting.setdefault(_pending_text(state, before), []).append(task)
                            else:
                                self._announce(progress, spec, attempt, state)
                    for text, tasks in waiting.items():
                        if text:  # one line for the tasks of an array that wait for the same reason
                            progress.console.print(f"[yellow]{escape(_task_list(tasks))}: {escape(text)}[/yellow]",
                                                   soft_wrap=True, highlight=False)
                    for record in sorted(stores.runs(), key=lambda r: r.finished):
                        if record.key in seen or record.key not in by_key:
                            continue
                        seen.add(record.key)
                        if record.status == "skipped":
                            progress.skipped(by_key[record.key], "stopped early")
                        else:
                            progress.finished(by_key[record.key], record.status, record.error)
                    for task, state in states.items():
                        if last.get(task) != _told(state):
                            last[task] = _told(state)
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
                    try:
                        self.client.cancel(spec.job_id)
                    except DuetError as exc:  # e.g. slurmctld not answering: say that the job was not cancelled
                        progress.console.print(
                            f"[red]{escape(exc.message)}[/red]: job {spec.job_id} goes on, followed until it ends; "
                            f"Ctrl-C again stops following (then cancel it yourself: scancel {spec.job_id})",
                            soft_wrap=True, highlight=False)
                        continue
                    self._wait_terminal(spec, attempt)

    def _queue_failed(self, exc: DuetError, since: float | None, spec: JobSpec, progress: CampaignProgress
                      ) -> float:
        """squeue failed: say so once and keep polling, up to QUEUE_PATIENCE. Returns since when it fails."""
        now = time.monotonic()
        if since is None:
            progress.note(f"{exc.message}; trying again (job {spec.job_id} goes on meanwhile)")
            return now
        if now - since > QUEUE_PATIENCE:
            raise DuetError(f"{exc.message}, for {QUEUE_PATIENCE:g} s: stopped following job {spec.job_id}, which "
                            "goes on without duet", hint="once slurmctld answers, run the same duet run with --resume: "
                            "it follows the job and collects its runs") from None
        return since

    def _wait_terminal(self, spec: JobSpec, attempt: Attempt) -> None:
        deadline = time.monotonic() + CANCEL_GRACE
        while time.monotonic() < deadline:
            try:
                queue = self.client.tasks(spec.job_id)
            except DuetError:
                queue = {}  # squeue failing for now: none is known to have ended yet
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
            log = attempt.log(state.task)
            if not state.node and not attempt.status(state.task):
                # Cancelled in the queue: its exit code is 0:0 and its reason the one it was waiting for.
                text = f"task {state.task}: {state.state} before it started" + (
                    f" (it was pending: {why})" if why and why != "None" else "")
                progress.console.print(f"[red]{escape(text)}[/red]", soft_wrap=True, highlight=False)
                return
            text = f"task {state.task}{where}: {state.state}" + (f", exit code {code}" if code else "") + (
                f" ({why})" if why and why != "None" else "")
            if log.exists():
                see = f"log: {log}"
            elif any(arg.startswith(("--output", "-o")) for arg in self.sbatch_args):
                see = "log: where your --sbatch-arg=--output put it"
            else:
                see = f"no log at {log}: do the nodes share that directory? (--shared-dir)"
            progress.console.print(f"[red]{escape(text)}[/red] — {escape(see)}", soft_wrap=True, highlight=False)
        elif state.state in _HELD:
            progress.note(f"task {state.task}{where}: {state.state.lower()}"
                          + (f" ({state.reason})" if state.reason else ""))


#: States in which a task waits for someone (an administrator, a preemptor) rather than for a node.
_HELD = frozenset({"SUSPENDED", "STOPPED", "REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD"})
#: Pending reasons Slurm does not clear by itself (squeue's %r), with what they mean for this job.
_STUCK = {
    "PartitionTimeLimit": "its --time is above the partition's time limit",
    "PartitionNodeLimit": "it asks for more nodes than the partition allows",
    "PartitionDown": "the partition is down",
    "PartitionInactive": "the partition is inactive",
    "ReqNodeNotAvail": "the nodes it may run on are down, drained or reserved",
    "BadConstraints": "no node has the features asked for (--constraint)",
    "DependencyNeverSatisfied": "its dependency can never be satisfied",
    "JobHeldUser": "it is held (sbatch --hold); 'scontrol release' lets it start",
    "JobHeldAdmin": "an administrator holds it",
    "AssocMaxWallDurationPerJobLimit": "its --time is above your account's limit",
    "QOSMaxWallDurationPerJobLimit": "its --time is above the QOS's limit",
}


def _told(state: TaskState) -> str:
    """What was last told about a task: its state, and for a pending one the reason it waits."""
    return f"{state.state}:{state.reason}" if state.state == "PENDING" else state.state


def _pending_text(state: TaskState, before: str) -> str:
    """What to say about a task that now waits in the queue ("": nothing, it waits for its turn)."""
    reason = state.reason
    if before and not before.startswith("PENDING"):
        # Slurm requeues a batch job whose node failed (or that was preempted): it starts again later,
        # and its task skips the runs it stored.
        waiting = f"; waiting ({reason})" if reason else ""
        return f"back in the queue: Slurm requeued it (its node failed, or it was preempted){waiting}"
    code = reason.replace(",", " ").split(" ")[0]
    if code in _STUCK:
        return (f"pending ({reason}): {_STUCK[code]}. Slurm keeps the job waiting until that changes; "
                "Ctrl-C cancels it")
    return ""  # its turn will come (Priority, Resources, a limit of running jobs, ...)


def _task_list(tasks: list[int]) -> str:
    """'task 3', 'tasks 0–7', 'tasks 0, 2–5': the tasks named in one line."""
    spans: list[list[int]] = []
    for task in sorted(tasks):
        if spans and task == spans[-1][1] + 1:
            spans[-1][1] = task
        else:
            spans.append([task, task])
    text = ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)
    return ("task " if len(tasks) == 1 else "tasks ") + text


class _HungUp(BaseException):
    """SIGHUP while following (BaseException, as KeyboardInterrupt: no `except Exception` may swallow it)."""


def _hung_up(signum: int, frame: object) -> None:
    raise _HungUp


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
