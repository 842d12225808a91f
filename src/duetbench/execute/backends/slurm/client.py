"""Slurm through its command-line tools, the interface every site has (docs/notes/distributed.md §2.6).

No Python binding (pyslurm must match the site's Slurm release exactly) and no ``--json`` output (its
schema changes between releases and ``squeue --json`` ignores ``-j``). Job state comes from ``squeue``
and ``scontrol`` only: ``sacct`` needs slurmdbd, which many test and cloud clusters do not run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from duetbench.errors import DuetError

#: States after which a task will not run again by itself (Slurm's job state codes, long form).
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                      "DEADLINE", "OUT_OF_MEMORY", "REVOKED"})
#: A task that ended in one of these did not finish its share.
UNSUCCESSFUL = TERMINAL - {"COMPLETED"}


@dataclass(frozen=True)
class TaskState:
    task: int
    state: str  # Slurm's long state name: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
    node: str  # "" until the task is placed
    reason: str  # squeue's %r: why pending, or why it ended (e.g. NonZeroExitCode)

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL


def parse_squeue(text: str, job_id: str) -> dict[int, TaskState]:
    """Tasks of array job ``job_id`` from ``squeue -h -r -o '%i|%T|%N|%r'`` output.

    With ``-r`` every array task has its own line, ``JOB_TASK``; a line without ``_`` is the job
    itself when it is not an array. Lines of other jobs are ignored."""
    tasks: dict[int, TaskState] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) < 4:
            continue
        ident, state, node, reason = parts[0], parts[1], parts[2], "|".join(parts[3:])
        job, _, task = ident.partition("_")
        if job != job_id:
            continue
        if task.isdigit():
            tasks[int(task)] = TaskState(int(task), state.split()[0] if state else "", node,
                                         "" if reason == "None" else reason)
        elif not task:
            tasks[0] = TaskState(0, state, node, "" if reason == "None" else reason)
    return tasks


def parse_scontrol(text: str) -> dict[str, str]:
    """One-line ``scontrol show job -o`` output as key → value (values hold no spaces in this form,
    except the trailing free-form ones, which are not needed)."""
    fields: dict[str, str] = {}
    for token in text.split():
        key, sep, value = token.partition("=")
        if sep and key not in fields:
            fields[key] = value
    return fields


class SlurmClient:
    """Subprocess calls to the Slurm tools on PATH, with errors turned into one clear line."""

    def __init__(self, env: Mapping[str, str] | None = None, timeout: float = 60.0) -> None:
        self.env = dict(os.environ if env is None else env)
        self.timeout = timeout

    def check_available(self) -> None:
        missing = [tool for tool in ("sbatch", "squeue", "scontrol", "scancel") if shutil.which(tool) is None]
        if missing:
            raise DuetError(f"--backend slurm: {', '.join(missing)} not found on PATH",
                            hint="run duet on a host of your Slurm cluster (a login node), or install the client "
                                 "tools (Debian: apt-get install slurm-client)")

    def _run(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None,
             check: bool = True) -> subprocess.CompletedProcess[str]:
        try:
            result = subprocess.run(list(argv), capture_output=True, text=True, timeout=self.timeout,
                                    env=dict(env) if env is not None else self.env)
        except FileNotFoundError:
            raise DuetError(f"{argv[0]} not found on PATH", hint="install the Slurm client tools") from None
        except subprocess.TimeoutExpired:
            raise DuetError(f"{argv[0]} did not answer within {self.timeout:g} s",
                            hint="is slurmctld reachable? check 'scontrol ping'") from None
        if check and result.returncode != 0:
            detail = (result.stderr.strip() or result.stdout.strip()).splitlines()
            raise DuetError(f"{' '.join(argv[:1])} failed (exit {result.returncode}): "
                            f"{detail[-1] if detail else 'no message'}",
                            hint="check the options given with --partition/--sbatch-arg and 'sinfo'")
        return result

    def submit(self, argv: Sequence[str], script: str, *, extra_env: Mapping[str, str] | None = None) -> str:
        """``sbatch --parsable ARGV SCRIPT`` → the job id. ``extra_env`` reaches the job through sbatch's
        environment (exported by default), never through its command line, which ``ps`` shows."""
        env = dict(self.env)
        env.update(extra_env or {})
        out = self._run(["sbatch", "--parsable", *argv, script], env=env).stdout.strip()
        job_id = out.split(";")[0].strip()  # "ID;CLUSTER" on federated/multi-cluster sites
        if not job_id.isdigit():
            raise DuetError(f"sbatch printed no job id: {out!r}", hint="check sbatch's output by hand")
        return job_id

    def tasks(self, job_id: str) -> dict[int, TaskState] | None:
        """The array's tasks as squeue knows them; None once slurmctld has forgotten the job
        (older than MinJobAge) — the caller then relies on the tasks' own status files."""
        result = self._run(["squeue", "-h", "-r", "-t", "all", "-j", job_id, "-o", "%i|%T|%N|%r"], check=False)
        if result.returncode != 0:
            if "Invalid job id" in result.stderr:
                return None
            detail = result.stderr.strip().splitlines()
            raise DuetError(f"squeue failed (exit {result.returncode}): {detail[-1] if detail else 'no message'}",
                            hint="is slurmctld reachable? check 'scontrol ping'")
        return parse_squeue(result.stdout, job_id)

    def task_details(self, job_id: str, task: int) -> dict[str, str]:
        """``scontrol show job -o JOB_TASK`` (exit code, reason, node) — empty when Slurm forgot it."""
        result = self._run(["scontrol", "show", "job", "-o", f"{job_id}_{task}"], check=False)
        return parse_scontrol(result.stdout) if result.returncode == 0 else {}

    def cancel(self, job_id: str) -> None:
        """``scancel JOB``; DuetError when it fails (the job then goes on)."""
        self._run(["scancel", job_id])
