"""``duet measure``: run one program N times as EMP does (Suh et al. (EMP) §3.3, Figure 5) and keep every sample.

For each sample: snapshot every other process, launch the command pinned through ``duet-launch`` (ET
and PT = user+sys of the whole process tree, from wait4), snapshot again, and append the sample with
the activity delta to a JSON-lines file at once, so an interrupted measurement keeps what it measured.
The analysis (``analyze/emp.py``) runs on the samples file, and can be re-run on it later.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from duetbench.errors import CommandFailed, DuetError
from duetbench.execute.invocation import LaunchSpec, RunningInvocation
from duetbench.execute.lock import MeasurementLock
from duetbench.execute.scratch import scratch_directory
from duetbench.execute.waits import ANSWER_GRACE_S, ANSWER_SLACK_S, wait_any
from duetbench.host.activity import ProcessActivity, activity_delta, snapshot
from duetbench.host.host import host_facts
from duetbench.usecases.interrupts import restore, stop_like_ctrl_c

FORMAT = "duetbench-measure"
VERSION = 1


@dataclass
class MeasureSample:
    index: int
    warmup: bool
    status: str
    exit_code: int
    et_s: float
    pt_s: float
    user_s: float
    sys_s: float
    start_ns: int
    end_ns: int
    cpu: int | None
    cpu_seen: int
    nivcsw: int
    #: Seconds between the two /proc snapshots around the sample (the window the activity covers).
    window_s: float
    snapshot_cost_ms: float
    activity: list[ProcessActivity] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "activity"}
        d["activity"] = [a.to_dict() for a in self.activity]
        return d

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> MeasureSample:
        fields = {k: data[k] for k in cls.__dataclass_fields__ if k in data and k != "activity"}
        return cls(**fields, activity=[ProcessActivity.from_dict(a) for a in data.get("activity", [])])

    def daemons(self) -> dict[str, list[float]]:
        """{comm: [PT seconds of each process]} of the other processes that ran: EMP's procDiff."""
        out: dict[str, list[float]] = {}
        for a in self.activity:
            if a.cpu_ns > 0:
                out.setdefault(a.comm, []).append(a.cpu_ns / 1e9)
        return out


@dataclass
class MeasureHeader:
    command: str
    argv: list[str]
    cpu: int | None
    runs: int
    warmup: int
    started: float
    host: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": VERSION, **self.__dict__}


def default_samples_path() -> Path:
    return Path(".duetbench") / time.strftime("measure-%Y%m%d-%H%M%S.jsonl")


def measure(header: MeasureHeader, samples_path: Path, *, timeout_s: float | None = None, show_output: bool = False,
            on_sample: Callable[[MeasureSample], None] | None = None) -> list[MeasureSample]:
    """Run the command ``header.warmup + header.runs`` times, writing each sample as it is measured."""
    lock = MeasurementLock(f"duet measure {header.command!r}")
    lock.acquire()
    samples: list[MeasureSample] = []
    own_affinity = os.sched_getaffinity(0)
    elsewhere = own_affinity - {header.cpu}
    if header.cpu is not None and elsewhere:
        # Our snapshots and the launcher's bookkeeping run on another CPU: they neither disturb the
        # command nor get delayed by a daemon on its CPU (which would blur what the window attributes).
        os.sched_setaffinity(0, elsewhere)
    previous = stop_like_ctrl_c()  # a SIGTERM or SIGHUP ends it as Ctrl-C does: the samples so far are kept
    try:
        with _open_samples(samples_path) as out, scratch_directory("measure") as tmp:
            out.write(json.dumps(header.to_json()) + "\n")
            out.flush()
            for k in range(header.warmup + header.runs):
                sample = _one(header, k, Path(tmp), timeout_s, show_output)
                out.write(json.dumps(sample.to_json()) + "\n")
                out.flush()
                samples.append(sample)
                if on_sample is not None:
                    on_sample(sample)
                if sample.status != "ok":
                    raise CommandFailed(
                        f"sample {k} of {header.command!r} ended with status {sample.status} "
                        f"(exit code {sample.exit_code})",
                        hint=f"the samples so far are in {samples_path}; fix the command and measure again")
    finally:
        restore(previous)
        os.sched_setaffinity(0, own_affinity)
        lock.release()
    return samples


def _open_samples(path: Path) -> TextIO:
    """The samples file, opened before anything is measured: one that cannot be written (a .duetbench
    directory another user made, say root's `sudo duet measure` in the same checkout) is refused in one
    line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "w")
    except OSError as exc:
        where = "" if exc.filename in (None, str(path)) else f" ({exc.filename})"
        raise DuetError(f"cannot write the samples file {path}: {exc.strerror}{where}",
                        hint="give a writable path with --samples PATH, or measure in a directory of yours") from None


def _one(header: MeasureHeader, k: int, workdir: Path, timeout_s: float | None, show_output: bool) -> MeasureSample:
    spec = LaunchSpec(argv=header.argv, side="M", index=k, pair=k, warmup=k < header.warmup, cpu=header.cpu,
                      timeout_s=timeout_s, show_output=show_output)
    before = snapshot()
    running = RunningInvocation(spec, workdir)
    # The launcher ends the command at its timeout; one stopped by it (`kill -STOP $PPID`) or stuck cannot,
    # and only this wait can notice (as the comparisons' runner does, execute/waits.py ANSWER_SLACK_S).
    patience = timeout_s + ANSWER_SLACK_S if timeout_s else None
    if patience is not None and wait_any({running.pid}, time.monotonic() + patience) is None:
        running.end_stuck(patience, ANSWER_GRACE_S)
    inv = running.wait()
    after = snapshot()
    return MeasureSample(
        index=k, warmup=spec.warmup, status=inv.status, exit_code=inv.exit_code, et_s=inv.wall_s, pt_s=inv.cpu_s,
        user_s=inv.user_s, sys_s=inv.sys_s, start_ns=inv.start_ns, end_ns=inv.end_ns, cpu=header.cpu,
        cpu_seen=inv.cpu_seen, nivcsw=inv.nivcsw, window_s=(after.taken_ns - before.taken_ns) / 1e9,
        snapshot_cost_ms=(before.cost_ns + after.cost_ns) / 1e6, activity=activity_delta(before, after))


def load_samples(path: Path) -> tuple[MeasureHeader, list[MeasureSample]]:
    """Read a samples file written by ``measure`` (complete or interrupted)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise DuetError(f"cannot read the samples file {path}: {exc.strerror}",
                        hint="give the .jsonl file a previous duet measure wrote") from None
    rows = list(_json_lines(lines, path))
    if not rows or rows[0].get("format") != FORMAT:
        raise DuetError(f"{path} is not a duet measure samples file (no header line)",
                        hint="give the .jsonl file a previous duet measure wrote")
    head = rows[0]
    header = MeasureHeader(**{k: head[k] for k in MeasureHeader.__dataclass_fields__})
    return header, [MeasureSample.from_json(r) for r in rows[1:]]


def _json_lines(lines: list[str], path: Path) -> Iterator[dict[str, Any]]:
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except ValueError:
            if n == len(lines):
                return  # a line cut short by an interruption: the samples before it are whole
            raise DuetError(f"{path}:{n}: not a JSON line", hint="the file was edited or damaged") from None


def new_header(command: str, argv: list[str], cpu: int | None, runs: int, warmup: int) -> MeasureHeader:
    return MeasureHeader(command=command, argv=argv, cpu=cpu, runs=runs, warmup=warmup, started=time.time(),
                         host=host_facts())


def pick_cpu(requested: int | None) -> int | None:
    """The CPU to pin to: the requested one (checked), else the last usable one (cpu0 takes more interrupts)."""
    usable = sorted(os.sched_getaffinity(0))
    if requested is None:
        return usable[-1] if usable else None
    if requested not in usable:
        raise DuetError(f"--cpu {requested} is not usable here (usable: {','.join(map(str, usable))})",
                        hint="pick one of the usable CPUs")
    return requested
