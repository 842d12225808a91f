"""One invocation of a command through the native launcher, and what it measured."""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec

from duetbench.execute.native import native_binary
from duetbench.host.cgroup import SideCgroup
from duetbench.host.procstat import steal_seconds_from_ticks

# What an invocation measured is the model's (the report reads it without this module); named here too.
from duetbench.model.invocation import Invocation as Invocation
from duetbench.model.invocation import usable as usable

STDERR_TAIL_LINES = 20

#: The launchers' answers are JSON objects (one a line; native/launcher.c).
_ANSWER = msgspec.json.Decoder()


def cpu_list(spec: LaunchSpec) -> str:
    """The CPUs `spec` pins its command to, as the launcher reads them ("3" or "2,3")."""
    return ",".join(map(str, spec.cpus)) if spec.cpus else str(spec.cpu)


class LaunchSpec(msgspec.Struct):
    argv: list[str]
    side: str
    index: int
    pair: int
    warmup: bool
    cpu: int | None = None
    #: Every CPU the command may use where it is given more than ``cpu`` (--cpus-per-command); ``cpu`` is
    #: then the lowest of them, the key its launcher, cgroup and records go by.
    cpus: tuple[int, ...] = ()
    barrier: Path | None = None
    barrier_timeout_s: float = 10.0
    timeout_s: float | None = None
    cgroup: SideCgroup | None = None
    show_output: bool = False
    env: dict[str, str] = msgspec.field(default_factory=dict)
    cwd: Path | None = None
    #: Keep the command's output in these files (campaigns parse it) instead of discarding stdout.
    stdout_path: Path | None = None
    stderr_path: Path | None = None
    #: The command's standard input (default: /dev/null).
    stdin_path: Path | None = None
    #: Show the command's output once it ended, each line prefixed with this name (--show-output): the
    #: output goes to stdout_path and the stderr file meanwhile, so A's and B's lines never interleave.
    label: str | None = None


def side_env(spec: LaunchSpec) -> dict[str, str]:
    """What every invocation is told about itself: its side, its number (DUET_ITERATION), and the same
    number as hyperfine names it for the commands it runs (HYPERFINE_ITERATION, hyperfine 1.19 on:
    "warmup-N" for a warm-up run), so that a command written for hyperfine, such as
    `my-command > out-${HYPERFINE_ITERATION}.log`, keeps one file per invocation here too."""
    number = str(spec.index)
    return {"DUET_SIDE": spec.side, "DUET_ITERATION": number,
            "HYPERFINE_ITERATION": f"warmup-{number}" if spec.warmup else number}


class Queued(msgspec.Struct, frozen=True):
    """Where a queued invocation meets its partner: the page of the barrier file (`BarrierPage` slot),
    the page whose abort halts the rest of the queue once a pair failed (None: nothing halts it), whether
    a command's non-zero exit or signal counts as such a failure (not with --ignore-failure), and the file its
    stderr goes to (one per queued pair: the next one would empty a shared file before it is read)."""

    slot: int
    halt_slot: int | None = None
    halt_failed: bool = True
    stderr_path: Path | None = None
    #: Once answered, the launcher writes a byte to the gate's done pipe (`ReleaseGate.done_fd`).
    notify: bool = False
    #: Fork the child only once the partner's launcher is ready to fork its own (its command ended and
    #: measured), so that the child does not wait (spin) at the barrier beside the partner's command or
    #: launcher. False: at once (the first of a batch, held at the gate instead).
    meet: bool = False
    #: Where the launcher also appends its answer (execute/journal.py), if anywhere.
    journal: Path | None = None
    #: Held at the gate until released (the first of a batch: its child would otherwise spin at the
    #: barrier on the CPU the orchestrator still needs to send the other launcher's requests).
    hold: bool = False


class RunningInvocation:
    """A launched ``duet-launch`` process. ``wait`` sleeps in waitpid: the orchestrator never polls."""

    def __init__(self, spec: LaunchSpec, workdir: Path) -> None:
        self.spec = spec
        fd, result = tempfile.mkstemp(prefix=f"{spec.side}-{spec.index}-", suffix=".json", dir=workdir)
        os.close(fd)
        self.result_path = Path(result)
        self._keep_stderr = spec.stderr_path is not None
        self.stderr_path = spec.stderr_path or self.result_path.with_suffix(".stderr")
        # --parent: killed (even -9) before it looked, the orchestrator still ends it (launcher.c follow_orchestrator)
        argv = [str(native_binary("duet-launch")), "--result", str(self.result_path), "--parent", str(os.getpid())]
        if spec.cpu is not None:
            argv += ["--cpu", cpu_list(spec)]
        if spec.barrier is not None:
            argv += ["--barrier", str(spec.barrier), "--barrier-timeout-ms", str(int(spec.barrier_timeout_s * 1000))]
        if spec.timeout_s:
            argv += ["--timeout-ms", str(max(1, int(spec.timeout_s * 1000)))]
        if spec.cgroup is not None:
            argv += ["--cgroup", str(spec.cgroup.path)]
        argv += ["--", *spec.argv]
        env = dict(os.environ)
        env.update(spec.env)
        env.update(side_env(spec))
        self._cgroup_before = (spec.cgroup.usage_usec(), spec.cgroup.wait_usec()) if spec.cgroup else None
        #: How long after it was due the orchestrator gave up on the launcher (`end_stuck`), if it did.
        self.overdue_s: float | None = None
        with open(self.stderr_path, "wb") as err, open(spec.stdout_path or os.devnull, "wb") as out, \
                open(spec.stdin_path or os.devnull, "rb") as stdin:
            # A new session: Ctrl-C reaches only the orchestrator, which then stops the launchers in order.
            self.process = subprocess.Popen(
                argv,
                stdin=stdin,
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
        _signal_if_running(self.process, signal.SIGTERM)

    def end_stuck(self, waited_s: float, grace_s: float) -> None:
        """Give up on a launcher that has not ended `waited_s` after it was due to (its --timeout and some
        slack): stopped (its command ran `kill -STOP $PPID`, and its own timer fired unseen) or stuck. Ended
        with its command (`end_stuck_launcher`); its result is then read as a timeout (`_overdue`)."""
        self.overdue_s = waited_s
        self.terminate()
        end_stuck_launcher(self.process, grace_s)

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
        cgroup_cpu, cgroup_wait = _cgroup_deltas(spec.cgroup, self._cgroup_before, raw)
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
        inv = invocation_from_result(spec, raw, cgroup_cpu, tail, cgroup_wait)
        if self.overdue_s is not None:
            _overdue(inv, self.overdue_s)
        return inv


def invocation_from_result(spec: LaunchSpec, raw: dict[str, object], cgroup_cpu: float | None,
                           stderr_tail: str, cgroup_wait: float | None = None) -> Invocation:
    """An Invocation from the launcher's JSON result (either launcher mode writes the same object)."""
    user = float(raw.get("utime_us", 0)) / 1e6  # type: ignore[arg-type]
    system = float(raw.get("stime_us", 0)) / 1e6  # type: ignore[arg-type]
    # rusage covers the child's whole life, including its spin at the start barrier before exec;
    # that spin lasts as long as the partner takes to arrive and is not the command's work.
    pre_exec = float(raw.get("pre_exec_cpu_ns", 0)) / 1e9  # type: ignore[arg-type]
    start, end = int(raw.get("start_ns", 0)), int(raw.get("end_ns", 0))  # type: ignore[call-overload]
    return Invocation(
        side=spec.side, index=spec.index, pair=spec.pair, warmup=spec.warmup,
        status=str(raw.get("status", "launch_error")),
        exit_code=int(raw.get("exit_code", -1)),  # type: ignore[call-overload]
        signal=int(raw.get("signal", 0)),  # type: ignore[call-overload]
        start_ns=start, end_ns=end,
        wall_s=max(0, end - start) / 1e9 if start else 0.0,
        cpu_s=max(0.0, user + system - pre_exec), user_s=user, sys_s=system,
        cgroup_cpu_s=cgroup_cpu,
        cgroup_wait_s=cgroup_wait,
        maxrss_kb=int(raw.get("maxrss_kb", 0)),  # type: ignore[call-overload]
        nvcsw=int(raw.get("nvcsw", 0)),  # type: ignore[call-overload]
        nivcsw=int(raw.get("nivcsw", 0)),  # type: ignore[call-overload]
        minflt=int(raw.get("minflt", 0)),  # type: ignore[call-overload]
        majflt=int(raw.get("majflt", 0)),  # type: ignore[call-overload]
        cpu_requested=int(raw.get("cpu_requested", -1)),  # type: ignore[call-overload]
        cpu_seen=int(raw.get("cpu_seen", -1)),  # type: ignore[call-overload]
        orphans_reaped=int(raw.get("orphans_reaped", 0)),  # type: ignore[call-overload]
        error=str(raw.get("error", "")),
        stderr_tail=stderr_tail,
    )


def _stderr_tail(path: Path) -> str:
    # Most commands write nothing to stderr: look at the size before reading.
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        return ""
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return ""
        # The last lines are what a failure report shows; 64 KiB holds far more than 20 of them.
        os.lseek(fd, max(0, size - 65536), os.SEEK_SET)
        data = os.read(fd, 65536)
        # A server reuses the file; an invocation that fails before its command opens it must not
        # show the previous one's output.
        os.ftruncate(fd, 0)
    finally:
        os.close(fd)
    lines = data.decode(errors="replace").splitlines()
    return "\n".join(lines[-STDERR_TAIL_LINES:])


#: Each side's cgroup counters when its last invocation ended: (directory inode, usage µs, wait µs), as
#: the launcher read them once it had reaped the command (~11 µs there; read by the orchestrator after
#: both answers it was ~0.2 ms of the gap between pairs: a read flushes per-CPU statistics). Only that
#: side's invocations run in it, so they are also the next one's starting point. A cgroup made again
#: (another inode) is read afresh.
_CGROUP_USAGE: dict[str, tuple[int, int | None, int | None]] = {}

#: A cgroup's counters (µs): CPU usage (cpu.stat) and run-queue wait (cpu.pressure), each None if unknown.
CgroupCounters = tuple[int | None, int | None]


def forget_cgroup_usage() -> None:
    """A new comparison makes its cgroups anew (possibly under the same names): read them afresh."""
    _CGROUP_USAGE.clear()


def _cgroup_inode(group: SideCgroup) -> int | None:
    """The cgroup directory's inode: as `SideCgroup.ensure` saw it just before (the runner ensures each
    invocation's cgroup as it makes its request, so no second stat() here), else looked up."""
    if group.inode >= 0:
        return group.inode
    try:
        return os.stat(group.path).st_ino
    except OSError:
        return None


def _cgroup_counters_before(group: SideCgroup, inode: int | None) -> CgroupCounters:
    if inode is None:
        return None, None
    cached = _CGROUP_USAGE.get(str(group.path))
    if cached is None or cached[0] != inode:
        return group.usage_usec(), group.wait_usec()
    # A counter the last answer could not give is read afresh, not carried over as unknown.
    usage, wait = cached[1], cached[2]
    return (group.usage_usec() if usage is None else usage), (group.wait_usec() if wait is None else wait)


def _seed_cgroup_counters(group: SideCgroup, inode: int | None) -> CgroupCounters:
    """Before queued invocations: make sure the cgroup's counters are known now, while nothing runs in
    it, so that each queued one can start from its predecessor's answer (`_cgroup_counters_before` then
    finds them)."""
    if inode is None:
        return None, None
    cached = _CGROUP_USAGE.get(str(group.path))
    if cached is None or cached[0] != inode or cached[1] is None or cached[2] is None:
        usage, wait = _cgroup_counters_before(group, inode)
        _CGROUP_USAGE[str(group.path)] = (inode, usage, wait)
        return usage, wait
    return cached[1], cached[2]


def _cgroup_counters_after(group: SideCgroup, raw: dict[str, object], inode: int | None) -> CgroupCounters:
    """The cgroup's counters once the invocation ended: as the launcher read them after reaping the
    command (off the orchestrator's path between pairs), or read here where it could not. Kept as the
    next invocation's start under the inode the invocation was sent with: were the cgroup made again
    meanwhile, the next one finds another inode and reads afresh."""
    reported = raw.get("cgroup_usage_usec")
    usage = reported if isinstance(reported, int) and reported >= 0 else group.usage_usec()
    reported = raw.get("cgroup_wait_usec")
    wait = reported if isinstance(reported, int) and reported >= 0 else group.wait_usec()
    if inode is not None:
        _CGROUP_USAGE[str(group.path)] = (inode, usage, wait)
    return usage, wait


def _cgroup_deltas(group: SideCgroup | None, before: CgroupCounters | None, raw: dict[str, object],
                   inode: int | None = None) -> tuple[float | None, float | None]:
    """An invocation's CPU time and run-queue wait in its side's cgroup (s), each None where unknown."""
    if group is None or before is None:
        return None, None
    after = _cgroup_counters_after(group, raw, inode)
    cpu, wait = ((a - b) / 1e6 if a is not None and b is not None and a >= b else None
                 for a, b in zip(after, before, strict=True))
    return cpu, wait


class ReleaseGate:
    """A pipe shared by the launchers of a duet: requests sent with ``hold`` wait for one byte of it.

    The orchestrator sends both sides' requests, then releases both with one write. Sent one by one,
    the first side's child would already spin at the start barrier and could hold the very CPU the
    orchestrator needs to send the second request (measured: ~2 ms per pair on 2 CPUs)."""

    def __init__(self) -> None:
        self.read_fd, self._write_fd = os.pipe()
        # Queued batches: each launcher writes a byte here once it answered its last request (`Queued.notify`).
        self.done_fd, self.done_write_fd = os.pipe()

    def release(self, count: int) -> None:
        os.write(self._write_fd, b"g" * count)

    def skip(self, count: int) -> None:
        """Let `count` held requests go without running them (each is answered ``skipped``)."""
        os.write(self._write_fd, b"s" * count)

    def close(self) -> None:
        for fd in (self.read_fd, self._write_fd, self.done_fd, self.done_write_fd):
            if fd >= 0:
                os.close(fd)
        self.read_fd = self._write_fd = self.done_fd = self.done_write_fd = -1


class LauncherServer:
    """A long-lived ``duet-launch --serve``: one launcher for all the invocations run on one CPU.

    Launching a command through it costs a request on a pipe and the launcher's own fork and exec of
    the command, instead of a Python Popen and a launcher exec per invocation; the orchestrator sleeps
    in poll() on the result pipes while commands run, so nothing of it runs on a measured CPU. The
    launcher pins itself to each request's CPU (again for each: a command that moved its launcher
    elsewhere does not move the next invocation), so what the command measures is as with the one-shot
    launcher."""

    def __init__(self, workdir: Path, name: str, gate: ReleaseGate | None = None) -> None:
        request_r, request_w = os.pipe()
        result_r, result_w = os.pipe()
        argv = [str(native_binary("duet-launch")), "--serve", str(result_w), "--parent", str(os.getpid())]
        passed = [result_w]
        if gate is not None:
            argv += ["--go", str(gate.read_fd), "--done", str(gate.done_write_fd)]
            passed += [gate.read_fd, gate.done_write_fd]
        self.gate = gate
        try:
            # A new session: Ctrl-C reaches only the orchestrator, which then stops the launchers in order.
            self.process = subprocess.Popen(argv, stdin=request_r, pass_fds=passed, start_new_session=True)
        finally:
            os.close(request_r)
            os.close(result_w)
        self._requests = request_w
        self._results = result_r
        #: What the request pipe holds: queued requests must fit, or the write would wait for the launcher
        #: to read them, one invocation at a time, beside the commands it measures.
        self.capacity = _widen_pipe(request_w, REQUEST_PIPE_BYTES)
        self._buffer = b""
        self.stderr_path = workdir / f"{name}.stderr"
        #: Invocations sent and not yet answered (read).
        self.busy = 0

    def fileno(self) -> int:
        return self._results

    def start(self, spec: LaunchSpec, *, discard_output: bool = False, hold: bool = False) -> ServedInvocation:
        """Send one invocation; it runs while the caller waits for it (``poll`` on ``fileno``). With
        ``hold`` the launcher forks its child at once, which starts the command only once the gate
        releases it (``ReleaseGate.release``) or ends unrun (``ReleaseGate.skip``)."""
        if self.busy:
            raise RuntimeError("a launcher runs one invocation at a time")
        if hold and self.gate is None:
            raise RuntimeError("hold needs a launcher made with a release gate")
        entries = ["hold=1"] if hold else []
        served, message = self._request(spec, entries, discard_output=discard_output)
        self._send(message)
        self.busy = 1
        return served

    def send(self, message: bytes, count: int) -> None:
        """Send what `prepare` made: `count` invocations, which the launcher runs one after another, each
        once its pair's partner is at the same barrier page (``Queued.slot``), answering each in order."""
        if self.busy:
            raise RuntimeError("a launcher runs one request list at a time")
        self._send(message)
        self.busy = count

    def prepare(self, requests: list[tuple[LaunchSpec, Queued]]) -> tuple[list[ServedInvocation], bytes]:
        """Several requests made into one message for `send` (a duet makes both launchers' before it sends
        either: the first launcher's work must not hold up the making of the second's). Their cgroups'
        starting counters are each the previous answer's, so they are taken as the answers are read
        (``ServedInvocation.wait``)."""
        served: list[ServedInvocation] = []
        messages: list[bytes] = []
        for spec, queued in requests:
            entries = [f"barrier_slot={queued.slot}"]
            if queued.halt_slot is not None:
                entries += [f"halt_slot={queued.halt_slot}", f"halt_failed={int(queued.halt_failed)}"]
            if queued.notify:
                entries.append("notify=1")
            if queued.meet:
                entries.append("meet=1")
            if queued.journal is not None:
                entries.append(f"journal={queued.journal}")
            if queued.hold:
                if self.gate is None:
                    raise RuntimeError("hold needs a launcher made with a release gate")
                entries.append("hold=1")
            one, message = self._request(spec, entries, stderr_path=queued.stderr_path, lazy_cgroup=True)
            served.append(one)
            messages.append(message)
        return served, b"".join(messages)

    def _request(self, spec: LaunchSpec, extra: list[str], *, discard_output: bool = False,
                 stderr_path: Path | None = None, lazy_cgroup: bool = False) -> tuple[ServedInvocation, bytes]:
        env = {**spec.env, **side_env(spec)}
        entries = [f"arg={a}" for a in spec.argv]
        entries += [f"env={k}={v}" for k, v in env.items()]
        if spec.cpu is not None:
            entries.append(f"cpu={cpu_list(spec)}")
        if spec.barrier is not None:
            entries += [f"barrier={spec.barrier}", f"barrier_timeout_ms={int(spec.barrier_timeout_s * 1000)}"]
        if spec.timeout_s:
            entries.append(f"timeout_ms={max(1, int(spec.timeout_s * 1000))}")
        if spec.cgroup is not None:
            entries.append(f"cgroup={spec.cgroup.path}")
        if spec.stdin_path is not None:
            entries.append(f"stdin={spec.stdin_path}")
        stderr_path = spec.stderr_path or stderr_path or self.stderr_path
        if discard_output:
            entries += [f"stdout={os.devnull}", f"stderr={os.devnull}"]
        elif not spec.show_output:
            entries += [f"stdout={spec.stdout_path or os.devnull}", f"stderr={stderr_path}"]
        if spec.cwd is not None:
            entries.append(f"cwd={spec.cwd}")
        entries += extra
        # As a file name's bytes (os.fsencode): a path under a TMPDIR that is not UTF-8 reaches the launcher
        # as it is on disk, where strict UTF-8 refused to encode it (a traceback before the first run).
        payload = os.fsencode("\0".join(entries) + "\0")
        inode = _cgroup_inode(spec.cgroup) if spec.cgroup else None
        before: CgroupCounters | None = None
        if spec.cgroup is not None:
            seen = _seed_cgroup_counters if lazy_cgroup else _cgroup_counters_before
            before = seen(spec.cgroup, inode)
        served = ServedInvocation(self, spec, stderr_path if not (discard_output or spec.show_output) else None,
                                  before, inode, lazy_cgroup=lazy_cgroup)
        return served, b"%08x\n" % len(payload) + payload

    def _send(self, message: bytes) -> None:
        try:
            view = memoryview(message)
            while view:
                view = view[os.write(self._requests, view):]
        except BrokenPipeError:
            pass  # the launcher is gone; its result pipe is at EOF and the invocation reads as a launch error

    def answered(self) -> int:
        """How many answers have come and are not read yet: what the result pipe holds is taken into the
        buffer without waiting (`read_result` then finds it there). How the orchestrator sees a queued
        batch's progress without being woken by each answer (execute/waits.py `wait_done`)."""
        poller = select.poll()
        poller.register(self._results, select.POLLIN)
        while poller.poll(0):
            chunk = os.read(self._results, 65536)
            if not chunk:  # the launcher is gone: nothing more will come
                break
            self._buffer += chunk
        return self._buffer.count(b"\n")

    def read_result(self) -> dict[str, object]:
        while b"\n" not in self._buffer:
            chunk = os.read(self._results, 65536)
            if not chunk:
                self.process.poll()
                return {"status": "launch_error",
                        "error": f"the launcher exited with {self.process.returncode} without writing a result"}
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        try:
            raw = _ANSWER.decode(line)  # ~2.6 µs against json.loads' ~12 (between pairs, twice a pair)
        except msgspec.DecodeError:
            raw = None
        if not isinstance(raw, dict):
            return {"status": "launch_error", "error": "the launcher wrote an unreadable result"}
        return raw

    def cancel(self) -> None:
        """Stop the invocation in progress (reported as interrupted); the launcher stays."""
        _signal_if_running(self.process, signal.SIGUSR1)

    def terminate(self) -> None:
        """Stop the invocation in progress and end the launcher."""
        _signal_if_running(self.process, signal.SIGTERM)

    def end_stuck(self, grace_s: float) -> None:
        """End a launcher that stopped answering: stopped (its command ran `kill -STOP $PPID`) or stuck
        (`end_stuck_launcher`). It answers the invocation in progress on its way out, if it can."""
        self.terminate()
        end_stuck_launcher(self.process, grace_s)

    def close(self) -> None:
        """End the launcher: EOF on its requests (or SIGTERM, if it is still running something)."""
        if self._requests >= 0:
            os.close(self._requests)
            self._requests = -1
        if self.busy:
            self.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self._results >= 0:
            os.close(self._results)
            self._results = -1


#: The request pipe's size asked for: 64 queued requests (execute/runner.py QUEUE_MAX_PAIRS) with the
#: largest environment offset (4 KiB, plan/layout.py) and a short command line are ~280 KiB, over a pipe's
#: default 64 KiB.
REQUEST_PIPE_BYTES = 1 << 20


def _widen_pipe(fd: int, size: int) -> int:
    """Make the pipe hold `size` bytes where the system allows it; what it holds now."""
    try:
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, size)
    except OSError:
        pass  # above /proc/sys/fs/pipe-max-size without the privilege to pass it: keep the default
    try:
        return fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except OSError:
        return 65536


class ServedInvocation:
    """An invocation running in a ``LauncherServer``; ``wait`` reads its result (blocking until then)."""

    def __init__(self, server: LauncherServer, spec: LaunchSpec, stderr_path: Path | None,
                 cgroup_before: CgroupCounters | None, cgroup_inode: int | None = None, *,
                 lazy_cgroup: bool = False) -> None:
        self.server = server
        self.spec = spec
        self._stderr_path = stderr_path
        self._cgroup_before = cgroup_before
        self._cgroup_inode = cgroup_inode
        # queued: the cgroup's counters before it are the last answer's in that cgroup, known when read
        self._lazy_cgroup = lazy_cgroup
        #: (CPU, cumulative steal seconds) as the launcher read it once the command was reaped, if it could.
        self.steal_at_end: tuple[int, float] | None = None
        #: How long the orchestrator waited for the answer before it ended the launcher (`LauncherServer.
        #: end_stuck`), if it did: the answer is then read as a timeout.
        self.overdue_s: float | None = None

    def fileno(self) -> int:
        return self.server.fileno()

    def cancel(self) -> None:
        self.server.cancel()

    def terminate(self) -> None:
        self.server.terminate()

    def wait(self) -> Invocation:
        raw = self.server.read_result()
        self.server.busy = max(0, self.server.busy - 1)
        steal = steal_seconds_from_ticks(raw.get("steal_ticks"))
        if steal is not None and self.spec.cpu is not None:
            self.steal_at_end = (self.spec.cpu, steal)
        if self._lazy_cgroup and self.spec.cgroup is not None:
            self._cgroup_before = _cgroup_counters_before(self.spec.cgroup, self._cgroup_inode)
        cgroup_cpu, cgroup_wait = _cgroup_deltas(self.spec.cgroup, self._cgroup_before, raw, self._cgroup_inode)
        if self.spec.label is not None:
            echo_output(self.spec.label, self.spec.stdout_path, self._stderr_path)
        # The launcher says how much the command wrote to stderr (most write nothing): the file is then
        # not opened here at all (three system calls of each invocation, between pairs).
        tail = _stderr_tail(self._stderr_path) if self._stderr_path is not None and raw.get("stderr_bytes") != 0 else ""
        inv = invocation_from_result(self.spec, raw, cgroup_cpu, tail, cgroup_wait)
        if self.overdue_s is not None:
            _overdue(inv, self.overdue_s)
        return inv


#: What a launcher answers of its command's own end: kept as it is even where the orchestrator had given up
#: on the launcher just as it answered.
_OWN_END = frozenset({"ok", "failed", "signaled", "timeout", "exec_failed"})


def _overdue(inv: Invocation, waited_s: float) -> None:
    """An invocation whose launcher the orchestrator ended after waiting `waited_s` for its answer: a
    timeout, as the launcher records one (a stopped launcher's own timer fired meanwhile, or its answer
    says only that it was ended: "interrupted", none at all)."""
    if inv.status not in _OWN_END or (inv.status == "timeout" and not inv.error):
        inv.status = "timeout"
        inv.error = (f"its launcher did not answer within {waited_s:g} s (stopped, as by a command's "
                     "`kill -STOP $PPID`, or stuck): duet ended it")


def echo_output(label: str, stdout_path: Path | None, stderr_path: Path | None) -> None:
    """Write an ended invocation's output to ours, every line prefixed with `label` (stdout to stdout,
    stderr to stderr); the stdout file is emptied for the next invocation, the stderr file is left for
    the failure report's tail. 64 KiB at a time, however long its lines: read whole, decoded and split
    into lines, a command's 100 MB of output took ten times that in memory (and a write per line)."""
    prefix = f"{label} | "
    for path, stream, empty in ((stdout_path, sys.stdout, True), (stderr_path, sys.stderr, False)):
        if path is None:
            continue
        try:  # universal newlines: \r\n and \r end a line, as splitlines() had them
            f = open(path, "r+", encoding="utf-8", errors="replace", newline=None)
        except OSError:
            continue
        with f:
            at_line_start = True
            while block := f.read(1 << 16):
                text = block.replace("\n", "\n" + prefix)
                if at_line_start:
                    text = prefix + text
                at_line_start = block.endswith("\n")  # its prefix then belongs to the next block's first line
                stream.write(text[:-len(prefix)] if at_line_start else text)
            if not at_line_start:
                stream.write("\n")
            if empty:
                f.truncate(0)
        stream.flush()


def end_stuck_launcher(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """After SIGTERM and SIGCONT (`_signal_if_running`), on which a launcher kills its command, answers the
    invocation in progress (a --timeout that expired meanwhile makes it "timeout") and exits: one that has
    not within `grace_s` is killed, and with it its children's process groups (its command leads one; what
    it left, re-parented to the launcher, its own) first: nothing else would end them once it is gone."""
    try:
        process.wait(timeout=grace_s)
        return
    except subprocess.TimeoutExpired:
        pass
    for pid in _children(process.pid):
        for kill in (os.killpg, os.kill):
            with contextlib.suppress(OSError):
                kill(pid, signal.SIGKILL)
    process.kill()
    process.wait()


def _children(pid: int) -> list[int]:
    """The child processes of `pid` (a launcher: single-threaded), [] if it is gone."""
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _signal_if_running(process: subprocess.Popen[bytes], signum: int) -> None:
    """Send `signum` unless the process has ended (and do not mind if it ends meanwhile), then SIGCONT: a
    launcher its command stopped (`kill -STOP $PPID`) acts on no other signal until it is continued, and
    the orchestrator, waiting for it to end, waited for ever (through Ctrl-C too)."""
    if process.poll() is None:
        try:
            process.send_signal(signum)
            process.send_signal(signal.SIGCONT)
        except ProcessLookupError:
            pass
