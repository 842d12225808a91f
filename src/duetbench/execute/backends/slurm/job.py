"""One submission ("attempt") of a campaign to Slurm, as files on the shared filesystem.

The submitting host writes ``job.json`` (the campaign as recorded, each task's share of the plan,
the run options) into ``RUNDIR/slurm/attempt-N/``; every task reads it there and writes
``tasks/K.json`` (its state, node, runs stored) and, without a PostgreSQL database, ``tasks/K.db``
(a SQLite store holding a copy of the campaign with the same uid, merged centrally afterwards). A
``--resume`` makes a new attempt with only the runs that are missing, so earlier attempts' files stay
as they were. No credential is ever written here: a PostgreSQL URL reaches the tasks through the
job's environment (``DB_ENV``).
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from duetbench.errors import DuetError

#: The job's environment variable carrying the database URL to the tasks (sbatch exports it).
DB_ENV = "DUETBENCH_SLURM_DB"
SPEC = "job.json"
FORMAT = 1


@dataclass
class JobSpec:
    uid: str
    attempt: int
    #: The keyword arguments the campaign was recorded with (CampaignStore.begin), plan included.
    campaign: dict[str, Any]
    store: str  # "postgresql": every task writes to the URL in DB_ENV; "sqlite": tasks/K.db
    db_label: str  # where results end up, without credentials
    shares: list[list[str]]  # per task: the run keys it executes, in plan order
    run_options: dict[str, Any]
    plan_cpus: list[int]  # the CPU pair the plan names; each node maps it onto its own pair
    python: str
    job_id: str = ""
    submitted: float = 0.0
    format: int = FORMAT
    sbatch_argv: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> int:
        return len(self.shares)


class Attempt:
    """The directory of one submission: RUNDIR/slurm/attempt-N."""

    def __init__(self, path: Path) -> None:
        self.path = path

    @classmethod
    def create(cls, run_dir: Path, spec: JobSpec) -> Attempt:
        path = run_dir / "slurm" / f"attempt-{spec.attempt}"
        (path / "tasks").mkdir(parents=True, exist_ok=False)
        (path / "logs").mkdir()
        attempt = cls(path)
        attempt.write_spec(spec)
        return attempt

    @staticmethod
    def all(run_dir: Path) -> list[Attempt]:
        found = [(int(p.name.split("-")[1]), p) for p in (run_dir / "slurm").glob("attempt-*")
                 if p.name.split("-")[1].isdigit() and (p / SPEC).exists()]
        return [Attempt(p) for _, p in sorted(found)]

    def spec(self) -> JobSpec:
        try:
            data = json.loads((self.path / SPEC).read_text())
        except FileNotFoundError:
            raise DuetError(f"{self.path / SPEC} not found",
                            hint="the task must see the submitting host's files: put --shared-dir on a filesystem "
                                 "shared by all nodes") from None
        if data.get("format") != FORMAT:
            raise DuetError(f"{self.path / SPEC} was written by another duetbench version",
                            hint="use the same duetbench installation on the submitting host and the nodes")
        return JobSpec(**data)

    def write_spec(self, spec: JobSpec) -> None:
        tmp = self.path / (SPEC + ".tmp")
        tmp.write_text(json.dumps(asdict(spec), indent=1))
        tmp.replace(self.path / SPEC)

    def script(self) -> Path:
        return self.path / "task.sh"

    def task_db(self, task: int) -> Path:
        return self.path / "tasks" / f"{task}.db"

    def log(self, task: int) -> Path:
        return self.path / "logs" / f"{task}.out"

    def status_path(self, task: int) -> Path:
        return self.path / "tasks" / f"{task}.json"

    def status(self, task: int) -> dict[str, Any]:
        try:
            return dict(json.loads(self.status_path(task).read_text()))
        except (OSError, ValueError):
            return {}

    def write_status(self, task: int, **fields: Any) -> None:
        data = self.status(task)
        data.update(fields, updated=time.time())
        tmp = self.status_path(task).with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.status_path(task))
