"""Executes a comparison with one of the three methods, handing each invocation out as it finishes.

The runner knows how to launch and wait; *when to stop* is a predicate given by the caller (the
statistics live elsewhere), and *where results go* is a callback (the store), called as soon as each
invocation is measured so that an interrupted run loses nothing already finished.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from duetbench.execute.barrier import ABORT_USER, BarrierPage
from duetbench.execute.invocation import Invocation, LaunchSpec, RunningInvocation
from duetbench.measure.activity import ActivityWindow, top_activity
from duetbench.measure.cgroup import SideCgroup
from duetbench.measure.procstat import read_steal_seconds, steal_delta
from duetbench.plan.layout import env_offset
from duetbench.plan.schedule import Schedule

# Invocations per side in one segment of an asynchronous duet (CPUs are re-drawn between segments).
ADUET_SEGMENT = 5


@dataclass
class RunSettings:
    method: str
    argv: dict[str, list[str]]
    cpus: tuple[int, int]
    seed: int
    warmup: int = 0
    timeout_s: float | None = None
    barrier_timeout_s: float = 10.0
    prepare: dict[str, str | None] = field(default_factory=lambda: {"A": None, "B": None})
    conclude: dict[str, str | None] = field(default_factory=lambda: {"A": None, "B": None})
    ignore_failure: bool = False
    show_output: bool = False
    use_cgroups: bool = True
    # Keep the side that finished first busy with unmeasured re-runs until its partner finishes, so the
    # longer side never runs alone (seed 000 §4.4, the remedy for uneven resource utilization).
    fill: bool = False


@dataclass
class RunOutcome:
    status: str  # "complete" | "interrupted" | "failed"
    failure: Invocation | None = None
    measured: list[Invocation] = field(default_factory=list)
    elapsed_s: float = 0.0


class ShellCommandFailed(Exception):
    def __init__(self, what: str, command: str, code: int, stderr: str) -> None:
        super().__init__(f"{what} command {command!r} failed with exit code {code}")
        self.what, self.command, self.code, self.stderr = what, command, code, stderr


def run_shell(command: str, what: str) -> None:
    """Run a --prepare/--setup/--cleanup command through the shell, as hyperfine does."""
    result = subprocess.run(["/bin/sh", "-c", command], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        raise ShellCommandFailed(what, command, result.returncode, result.stderr[-2000:])


# should_continue(measured invocations so far, seconds since the first measured invocation) -> bool
StopRule = Callable[[list[Invocation], float], bool]


class Runner:
    def __init__(self, settings: RunSettings, should_continue: StopRule,
                 on_invocation: Callable[[Invocation], None],
                 on_activity: Callable[[list[Invocation]], None] | None = None) -> None:
        self.s = settings
        self.should_continue = should_continue
        self.on_invocation = on_invocation
        # aduet invocations overlap, so their activity is known only when a segment ends, after they
        # were stored: this is told which stored invocations got it.
        self.on_activity = on_activity
        self.schedule = Schedule(settings.seed, settings.cpus)
        self.measured: list[Invocation] = []
        self._t0: float | None = None
        self._running: list[RunningInvocation] = []

    # -- helpers -----------------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return 0.0 if self._t0 is None else time.monotonic() - self._t0

    def _emit(self, inv: Invocation) -> None:
        if not inv.warmup:
            if self._t0 is None:
                self._t0 = time.monotonic() - inv.wall_s
            self.measured.append(inv)
        self.on_invocation(inv)

    def _is_failure(self, inv: Invocation) -> bool:
        if inv.ok:
            return False
        if inv.status == "failed" and self.s.ignore_failure:
            return False
        return True

    def _prepare(self, side: str) -> None:
        command = self.s.prepare.get(side)
        if command:
            run_shell(command, f"--prepare ({side})")

    def _conclude(self, side: str) -> None:
        command = self.s.conclude.get(side)
        if command:
            run_shell(command, f"--conclude ({side})")

    def _spec(self, side: str, index: int, pair: int, warmup: bool, cpu: int,
              barrier: Path | None, cgroups: dict[str, SideCgroup | None]) -> LaunchSpec:
        # A's and B's index-th invocations share an environment size (plan/layout.py).
        return LaunchSpec(argv=self.s.argv[side], side=side, index=index, pair=pair, warmup=warmup, cpu=cpu,
                          barrier=barrier, barrier_timeout_s=self.s.barrier_timeout_s, timeout_s=self.s.timeout_s,
                          cgroup=_ensured(cgroups.get(side)), show_output=self.s.show_output,
                          env=env_offset(f"{self.s.seed}:{index}"))

    def stop_all(self) -> None:
        for r in self._running:
            r.terminate()
        for r in self._running:
            r.process.wait()
        self._running = []

    # -- entry point -------------------------------------------------------------------------------
    def run(self) -> RunOutcome:
        tag = f"duetbench-{os.getpid()}"
        cgroups: dict[str, SideCgroup | None] = {side: None for side in ("A", "B")}
        if self.s.use_cgroups:
            cgroups = {side: SideCgroup.create(f"{tag}-{side}") for side in ("A", "B")}
        try:
            with tempfile.TemporaryDirectory(prefix="duetbench-") as tmp:
                workdir = Path(tmp)
                method = {"duet": self._run_duet, "aduet": self._run_aduet, "sequential": self._run_sequential}
                try:
                    failure = method[self.s.method](workdir, cgroups)
                except KeyboardInterrupt:
                    self.stop_all()
                    return RunOutcome("interrupted", None, self.measured, self._elapsed())
                status = "failed" if failure is not None else "complete"
                return RunOutcome(status, failure, self.measured, self._elapsed())
        finally:
            for group in cgroups.values():
                if group is not None:
                    group.remove()

    def _filler(self, side: str, cpu: int | None, workdir: Path) -> RunningInvocation:
        """An unmeasured re-run of ``side`` that keeps its CPU busy while the partner still runs."""
        spec = LaunchSpec(argv=self.s.argv[side], side=side, index=-1, pair=-1, warmup=True, cpu=cpu)
        filler = RunningInvocation(spec, workdir)
        self._running.append(filler)
        return filler

    def _end_filler(self, filler: RunningInvocation) -> None:
        filler.terminate()
        filler.process.wait()
        filler.discard()
        self._running.remove(filler)

    def _wait_pair(self, running: list[RunningInvocation], workdir: Path) -> list[Invocation]:
        """Wait for both sides of a pair; with ``fill``, the side that finishes first is re-run (unmeasured)
        until its partner finishes too."""
        first_pid = _wait_any({r.pid for r in running})
        first = next(r for r in running if r.pid == first_pid)
        other = next(r for r in running if r is not first)
        done = first.wait()
        filler = self._filler(done.side, first.spec.cpu, workdir) if self.s.fill and done.ok else None
        while filler is not None and _wait_any({other.pid, filler.pid}) == filler.pid:
            self._end_filler(filler)  # it finished on its own: the partner is much longer; go on filling
            filler = self._filler(done.side, first.spec.cpu, workdir)
        late = other.wait()
        if filler is not None:
            self._end_filler(filler)
        return [done, late]

    def _run_duet(self, workdir: Path, cgroups: dict[str, SideCgroup | None]) -> Invocation | None:
        with BarrierPage(parties=2) as barrier:
            pair = 0
            while True:
                warmup = pair < self.s.warmup
                if not warmup and not self.should_continue(self.measured, self._elapsed()):
                    return None
                placement = self.schedule.next_duet_pair()
                for side in placement.order:
                    self._prepare(side)
                barrier.reset()
                activity = ActivityWindow()
                activity.start()
                steal_before = read_steal_seconds()
                try:
                    for side in placement.order:
                        spec = self._spec(side, pair, pair, warmup, placement.cpu[side], barrier.path, cgroups)
                        self._running.append(RunningInvocation(spec, workdir))
                    results = self._wait_pair(list(self._running), workdir)
                except KeyboardInterrupt:
                    barrier.abort(ABORT_USER)
                    raise
                self._running = []
                steal_after = read_steal_seconds()
                # machine-wide, so both sides of the pair share one record of the other processes
                noise = _activity_json(activity)
                failure = None
                for inv in sorted(results, key=lambda i: i.side):
                    inv.steal_s = steal_delta(steal_before, steal_after, inv.cpu_requested)
                    inv.activity = noise
                    self._emit(inv)
                    if failure is None and self._is_failure(inv):
                        failure = inv
                if failure is not None:
                    return _root_cause(results)
                for side in placement.order:
                    self._conclude(side)
                pair += 1

    def _run_sequential(self, workdir: Path, cgroups: dict[str, SideCgroup | None]) -> Invocation | None:
        cpu = self.s.cpus[1]
        round_ = 0
        while True:
            warmup = round_ < self.s.warmup
            if not warmup and not self.should_continue(self.measured, self._elapsed()):
                return None
            for side in self.schedule.next_round_order():
                self._prepare(side)
                activity = ActivityWindow()
                activity.start()
                steal_before = read_steal_seconds()
                running = RunningInvocation(self._spec(side, round_, round_, warmup, cpu, None, cgroups), workdir)
                self._running = [running]
                inv = running.wait()
                self._running = []
                inv.steal_s = steal_delta(steal_before, read_steal_seconds(), cpu)
                inv.activity = _activity_json(activity)
                self._emit(inv)
                if self._is_failure(inv):
                    return inv
                self._conclude(side)
            round_ += 1

    def _run_aduet(self, workdir: Path, cgroups: dict[str, SideCgroup | None]) -> Invocation | None:
        """Both sides invoke back to back on their own CPU, never waiting for each other (seed 004 §3).

        Invocations come in segments of ADUET_SEGMENT per side. At a segment's end the CPUs are drawn
        again, so that a fixed difference between the two CPUs averages out as in the synchronous duet;
        the side that finishes its segment first is kept busy (``fill``) until the other finishes."""
        count = {"A": 0, "B": 0}
        segment = 0
        while True:
            if min(count.values()) >= self.s.warmup and segment > 0 \
                    and not self.should_continue(self.measured, self._elapsed()):
                return None
            cpu = self.schedule.aduet_placement()
            left = {"A": ADUET_SEGMENT, "B": ADUET_SEGMENT}
            # One attribution window per segment: a snapshot between overlapping invocations would
            # delay the next launch on a CPU a measured side needs.
            window = ActivityWindow()
            window.start()
            emitted: list[Invocation] = []
            measuring: dict[int, tuple[RunningInvocation, dict[int, float]]] = {}
            fillers: dict[int, RunningInvocation] = {}

            def launch(side: str) -> None:
                self._prepare(side)
                index = count[side]
                spec = self._spec(side, index, segment, index < self.s.warmup, cpu[side], None, cgroups)
                steal = read_steal_seconds()
                running = RunningInvocation(spec, workdir)
                self._running.append(running)
                measuring[running.pid] = (running, steal)
                count[side] += 1
                left[side] -= 1

            def fill(side: str) -> None:
                filler = self._filler(side, cpu[side], workdir)
                fillers[filler.pid] = filler

            for side in self.schedule.next_round_order():
                launch(side)
            failure: Invocation | None = None
            while measuring:
                pid = _wait_any(set(measuring) | set(fillers))
                if pid in fillers:  # a filler ended on its own while the partner still runs: fill again
                    filler = fillers.pop(pid)
                    self._end_filler(filler)
                    fill(filler.spec.side)
                    continue
                running, steal = measuring.pop(pid)
                self._running.remove(running)
                inv = running.wait()
                inv.steal_s = steal_delta(steal, read_steal_seconds(), inv.cpu_requested)
                self._emit(inv)
                emitted.append(inv)
                if failure is None and self._is_failure(inv):
                    failure = inv
                if failure is None:
                    self._conclude(inv.side)
                # Within a segment the stop rule is asked too, so --runs N ends at N, not at a segment's end.
                if failure is None and left[inv.side] > 0 and (
                        count[inv.side] <= self.s.warmup or self.should_continue(self.measured, self._elapsed())):
                    launch(inv.side)
                elif failure is None and self.s.fill and measuring:
                    fill(inv.side)
            for filler in fillers.values():
                self._end_filler(filler)
            noise = _activity_json(window)
            for inv in emitted:
                inv.activity = noise
            if self.on_activity is not None and emitted:
                self.on_activity(emitted)
            if failure is not None:
                return failure
            segment += 1


def _ensured(group: SideCgroup | None) -> SideCgroup | None:
    # A compare's cgroups live for all its invocations; if one vanished, launching into it would fail.
    return group.ensure() if group is not None else None


def _activity_json(window: ActivityWindow) -> str | None:
    """The busiest other processes since ``window.start()`` (EMP's procDiff, seed 002 §3.3), as JSON.
    For aduet the window is a whole segment: its invocations overlap."""
    try:
        return json.dumps(top_activity(window.stop()))
    except OSError:
        return None


def _wait_any(pids: set[int]) -> int:
    """Sleep until one of ``pids`` has exited and return it, leaving it unreaped for Popen.

    Waits on pidfds of exactly these processes, so other children of this process (a test runner's,
    say) can neither wake nor confuse it; without pidfds (Linux < 5.3), on any child."""
    try:
        fds = {os.pidfd_open(pid): pid for pid in pids}
    except (AttributeError, OSError):
        return _wait_any_child(pids)
    try:
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        while True:
            ready = poller.poll()
            if ready:
                return fds[ready[0][0]]
    finally:
        for fd in fds:
            os.close(fd)


def _wait_any_child(pids: set[int]) -> int:
    while True:
        info = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        if info is not None and info.si_pid in pids:
            return info.si_pid
        if info is not None:
            os.waitpid(info.si_pid, 0)  # not ours to measure; reap it so waitid does not return it again


def _root_cause(results: list[Invocation]) -> Invocation:
    """Of a failed pair, the invocation that failed first-hand (not the partner aborted by it)."""
    primary = [r for r in results if r.status not in ("ok", "barrier_aborted", "barrier_timeout")]
    return (primary or [r for r in results if not r.ok])[0]
