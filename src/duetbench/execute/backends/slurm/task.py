"""``duet slurm-task``: one array task's share of a campaign, on a compute node.

The task records the campaign in its store (its own SQLite file, or finds it in the shared PostgreSQL
database by uid), maps the plan's CPU pair onto this node's, and measures its share with the campaign's
own per-run loop (`usecases.campaign.worker_loop`) through the local or container backend, as the
campaign's `--executor` says: exactly what a local `duet run` does with those runs.
"""
from __future__ import annotations

import hashlib
import os
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

import click
from rich.console import Console

from duetbench.errors import DuetError
from duetbench.execute.backends.base import CampaignJob
from duetbench.execute.backends.registry import create_backend
from duetbench.execute.backends.slurm.job import DB_ENV, Attempt, JobSpec
from duetbench.execute.lock import MeasurementLock
from duetbench.host.host import host_facts, usable_cpus
from duetbench.plan.campaign import PlannedRun
from duetbench.plan.schedule import choose_cpus
from duetbench.store.campaigns import CampaignStore
from duetbench.store.db import Store
from duetbench.store.location import StoreLocation


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


def _on_term(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # scancel: stop like Ctrl-C, keep what finished


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
    from duetbench.config.campaign import load_campaign

    # The worker re-enters the campaign use case for its per-run loop: the very code a local run uses.
    from duetbench.usecases.campaign import worker_loop

    campaign = load_campaign(Path(spec.campaign["path"]))
    sha = hashlib.sha256(campaign.source_text.encode()).hexdigest()
    if sha != spec.campaign["source_sha256"]:
        raise DuetError(f"{campaign.path} changed since the campaign was submitted",
                        hint="restore the file as it was, or start a new campaign")
    if spec.store == "postgresql":
        # Taken out of the environment: the benchmarks this task starts inherit it, and need no password.
        db = os.environ.pop(DB_ENV, None)
        if not db:
            raise DuetError(f"the job's environment has no {DB_ENV} (the PostgreSQL URL)",
                            hint="do not pass --export=NONE to sbatch; or add it: --sbatch-arg=--export=ALL")
    else:
        db = str(attempt.task_db(task))
    location = StoreLocation.parse(db)
    here = create_backend("local", campaign, str(spec.run_options["executor"]))  # local or container
    here.check()
    store = Store(location)
    try:
        campaigns = CampaignStore(store)
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
        run_root = Path(spec.campaign["run_dir"])
        console.print(f"duet slurm-task: campaign {campaign.name} (uid {spec.uid}), task {task} on {node}: "
                      f"{len(share)} runs, {len([r for r in share if r.key not in done])} to go", highlight=False)
        # Every run this task stores says which node and job measured it (the campaign's host facts
        # describe the submitting host, not the nodes).
        loop = worker_loop(campaign, campaigns, campaign_id, run_root, spec.run_options, location, console,
                           note=f"slurm: job {job} on node {node}")
        share_job = CampaignJob(campaign=campaign, campaign_id=campaign_id, uid=spec.uid, recorded=spec.campaign,
                                plan=share, done=done, run_root=run_root, store=campaigns, location=location,
                                run_options=spec.run_options, loop=loop, console=console, progress=False)
        lock = MeasurementLock(f"duet slurm-task {campaign.name} task {task} (job {job})")
        _acquire_waiting(lock, console)
        attempt.write_status(task, state="running")
        previous = signal.signal(signal.SIGTERM, _on_term)
        try:
            status = here.execute(share_job).status
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
    sys.exit(run_task(attempt_dir, task, Console(highlight=False, emoji=False)))
