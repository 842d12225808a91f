"""One invocation of a command through the native launcher, and what it measured."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from duetbench.execute.native import native_binary
from duetbench.measure.cgroup import SideCgroup

STDERR_TAIL_LINES = 20


@dataclass
class Invocation:
    """Everything measured about one invocation; times in seconds, timestamps in CLOCK_MONOTONIC ns."""

    side: str
    index: int
    pair: int
    warmup: bool
    status: str
    exit_code: int
    signal: int
    start_ns: int
    end_ns: int
    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    cgroup_cpu_s: float | None
    maxrss_kb: int
    nvcsw: int
    nivcsw: int
    minflt: int
    majflt: int
    cpu_requested: int
    cpu_seen: int
    orphans_reaped: int
    steal_s: float | None = None
    error: str = ""
    stderr_tail: str = ""
    #: JSON list of the busiest other processes on the machine during the run ({"pid","comm","cpu_ms"},
    #: measure.activity.top_activity): what a report names when a run was slow. None if not recorded.
    activity: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class LaunchSpec:
    argv: list[str]
    side: str
    index: int
    pair: int
    warmup: bool
    cpu: int | None = None
    barrier: Path | None = None
    barrier_timeout_s: float = 10.0
    timeout_s: float | None = None
    cgroup: SideCgroup | None = None
    show_output: bool = False
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    #: Keep the command's output in these files (campaigns parse it) instead of discarding stdout.
    stdout_path: Path | None = None
    stderr_path: Path | None = None


class RunningInvocation:
    """A launched ``duet-launch`` process. ``wait`` sleeps in waitpid: the orchestrator never polls."""

    def __init__(self, spec: LaunchSpec, workdir: Path) -> None:
        self.spec = spec
        fd, result = tempfile.mkstemp(prefix=f"{spec.side}-{spec.index}-", suffix=".json", dir=workdir)
        os.close(fd)
        self.result_path = Path(result)
        self._keep_stderr = spec.stderr_path is not None
        self.stderr_path = spec.stderr_path or self.result_path.with_suffix(".stderr")
        argv = [str(native_binary("duet-launch")), "--result", str(self.result_path)]
        if spec.cpu is not None:
            argv += ["--cpu", str(spec.cpu)]
        if spec.barrier is not None:
            argv += ["--barrier", str(spec.barrier), "--barrier-timeout-ms", str(int(spec.barrier_timeout_s * 1000))]
        if spec.timeout_s:
            argv += ["--timeout-ms", str(max(1, int(spec.timeout_s * 1000)))]
        if spec.cgroup is not None:
            argv += ["--cgroup", str(spec.cgroup.path)]
        argv += ["--", *spec.argv]
        env = dict(os.environ)
        env.update(spec.env)
        env.update({"DUET_SIDE": spec.side, "DUET_ITERATION": str(spec.index)})
        self._cgroup_before = spec.cgroup.usage_usec() if spec.cgroup else None
        with open(self.stderr_path, "wb") as err, open(spec.stdout_path or os.devnull, "wb") as out:
            # A new session: Ctrl-C reaches only the orchestrator, which then stops the launchers in order.
            self.process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=None if spec.show_output else out,
                stderr=None if spec.show_output else err,
                env=env,
                cwd=spec.cwd,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        return self.process.pid

    def terminate(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass

    def discard(self) -> None:
        """Forget an invocation that was not measured (a filler): remove its files."""
        self.result_path.unlink(missing_ok=True)
        if not self._keep_stderr:
            self.stderr_path.unlink(missing_ok=True)

    def wait(self) -> Invocation:
        self.process.wait()
        return self._collect()

    def _collect(self) -> Invocation:
        spec = self.spec
        try:
            raw = json.loads(self.result_path.read_text())
        except (OSError, ValueError):
            raw = {"status": "launch_error", "error": f"the launcher exited with {self.process.returncode} "
                   "without writing a result"}
        cgroup_cpu = None
        if spec.cgroup is not None and self._cgroup_before is not None:
            after = spec.cgroup.usage_usec()
            if after is not None:
                cgroup_cpu = (after - self._cgroup_before) / 1e6
        tail = ""
        try:
            # Only the end of the file: a command's stderr may be gigabytes.
            with open(self.stderr_path, "rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - 64 * 1024))
                lines = f.read().decode(errors="replace").splitlines()
            tail = "\n".join(lines[-STDERR_TAIL_LINES:])
        except OSError:
            pass
        self.discard()
        user = raw.get("utime_us", 0) / 1e6
        system = raw.get("stime_us", 0) / 1e6
        # rusage covers the child's whole life, including its spin at the start barrier before exec;
        # that spin lasts as long as the partner takes to arrive and is not the command's work.
        pre_exec = raw.get("pre_exec_cpu_ns", 0) / 1e9
        start, end = int(raw.get("start_ns", 0)), int(raw.get("end_ns", 0))
        return Invocation(
            side=spec.side,
            index=spec.index,
            pair=spec.pair,
            warmup=spec.warmup,
            status=str(raw.get("status", "launch_error")),
            exit_code=int(raw.get("exit_code", -1)),
            signal=int(raw.get("signal", 0)),
            start_ns=start,
            end_ns=end,
            wall_s=max(0, end - start) / 1e9 if start else 0.0,
            cpu_s=max(0.0, user + system - pre_exec),
            user_s=user,
            sys_s=system,
            cgroup_cpu_s=cgroup_cpu,
            maxrss_kb=int(raw.get("maxrss_kb", 0)),
            nvcsw=int(raw.get("nvcsw", 0)),
            nivcsw=int(raw.get("nivcsw", 0)),
            minflt=int(raw.get("minflt", 0)),
            majflt=int(raw.get("majflt", 0)),
            cpu_requested=int(raw.get("cpu_requested", -1)),
            cpu_seen=int(raw.get("cpu_seen", -1)),
            orphans_reaped=int(raw.get("orphans_reaped", 0)),
            error=str(raw.get("error", "")),
            stderr_tail=tail,
        )
