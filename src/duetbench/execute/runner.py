"""Executes a comparison with one of the three methods, handing each invocation out as it finishes.

The runner knows how to launch and wait; *when to stop* is a predicate given by the caller (the
statistics live elsewhere), and *where results go* is a callback (the store), called as soon as each
invocation is measured so that an interrupted run loses nothing already finished. Duet pairs queued to
the launchers (`_run_queued`) are handed out together when their batch ends; meanwhile the launchers
journal them (execute/journal.py).
"""
from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from duetbench.execute import journal
from duetbench.execute.barrier import ABORT_EXITED, ABORT_USER, BarrierPage
from duetbench.execute.invocation import (
    Invocation,
    LauncherServer,
    LaunchSpec,
    Queued,
    ReleaseGate,
    ServedInvocation,
)
from duetbench.execute.meanwhile import Meanwhile
from duetbench.execute.noise import NoiseWindows, StealReadings
from duetbench.execute.owner import Owner
from duetbench.execute.pipe_sinks import PipeSinks
from duetbench.execute.shell import run_in_group
from duetbench.execute.stage import RunnerStage, cgroup_key, ensured
from duetbench.execute.waits import ANSWER_GRACE_S, ANSWER_SLACK_S, wait_all, wait_done, wait_ready
from duetbench.host.activity import ActivityWindow
from duetbench.host.cgroup import SideCgroup
from duetbench.host.procstat import read_steal_seconds, steal_delta
from duetbench.plan.layout import env_offset
from duetbench.plan.schedule import PairPlacement, Schedule
from duetbench.startup import settle

# Invocations per side in one segment of an asynchronous duet (CPUs are re-drawn between segments).
ADUET_SEGMENT = 5
#: Most duet pairs queued to the launchers at once (issue 17). Between queued pairs the launchers meet by
#: themselves, each at a barrier page of the pair's own, and the orchestrator sleeps until the last has
#: been answered: between two queued pairs of a 20 ms command ~0.3-0.5 ms pass instead of ~1.5 ms of the
#: orchestrator's reading, storing and sending (docs/notes/overhead.md, eleventh pass). A pair costs a
#: ~600-byte answer in the launcher's result pipe until it is read; 32 stay well within its 64 KiB.
QUEUE_MAX_PAIRS = 64
#: ... and at most about this much time of pairs: the progress line, the live statistics and a `kill -9`
#: (which loses the pairs of the batch in flight: they are stored when it ends) see a batch as one step.
QUEUE_SPAN_S = 1.0

class RunSettings(msgspec.Struct):
    method: str
    argv: dict[str, list[str]]
    #: Each side's CPU (a duet: one each; sequential: the same twice), which its launcher, cgroup and
    #: records are keyed by.
    cpus: tuple[int, int]
    seed: int
    warmup: int = 0
    #: Where a command is given several CPUs (--cpus-per-command): all of them, by the key in `cpus`.
    cpu_sets: dict[int, tuple[int, ...]] = msgspec.field(default_factory=dict)
    timeout_s: float | None = None
    barrier_timeout_s: float = 10.0
    prepare: dict[str, str | None] = msgspec.field(default_factory=lambda: {"A": None, "B": None})
    conclude: dict[str, str | None] = msgspec.field(default_factory=lambda: {"A": None, "B": None})
    ignore_failure: bool = False
    #: With ignore_failure, the exit codes that are timed (--ignore-failure=1,2); empty: every one. A queued
    #: batch is then not halted by the launchers at a failure (they halt at any non-zero exit or none):
    #: the orchestrator stops at the first other code when the batch ends, and stores nothing after it.
    ignore_exit_codes: frozenset[int] = frozenset()
    show_output: bool = False
    use_cgroups: bool = True
    # Keep the side that finished first busy with unmeasured re-runs until its partner finishes, so the
    # longer side never runs alone (Bulej et al. 2020 §4.4, the remedy for uneven resource utilization).
    fill: bool = False
    #: The shell --prepare/--conclude run in (-S/--shell's argv); None: /bin/sh.
    hook_shell: list[str] | None = None
    # Number of the first pair (duet) or round (sequential): a comparison continued by another runner
    # (--method auto after re-deciding) keeps its pairs apart from the earlier runner's.
    first: int = 0
    # Per side, where its standard output goes (--output): "null", "pipe" (read and discarded), "inherit"
    # (shown, labelled with the side's name) or a file; a side not named here: "null".
    output: dict[str, str] = msgspec.field(default_factory=dict)
    # The commands' standard input (--input); None: /dev/null.
    input_path: str | None = None
    # Names shown before the lines of --show-output / --output=inherit.
    labels: dict[str, str] = msgspec.field(default_factory=lambda: {"A": "A", "B": "B"})
    # Record other processes' activity around every pair (invocation), whatever it costs: what a short
    # comparison's analysis needs to tell one-sided interference (analyze/interference.py).
    activity_every_pair: bool = False
    # Work the orchestrator needs once it has measured (importing the statistics and the report: ~90 ms
    # on a 2-vCPU VM), done on a thread while the first warm-up unit runs, when the orchestrator would only
    # wait; joined before anything measured starts, so it never runs beside a measured invocation.
    during_warmup: Callable[[], None] | None = None
    # A fixed count of measured pairs (--runs N of one method): no pair beyond the warm-ups and these is
    # sent ahead, where it would only be withdrawn (~3-5 ms at the end of a 20 ms duet). None: the stop
    # rule decides; a pair it asks for beyond this count is still run, only not sent ahead.
    pairs_at_most: int | None = None


class RunOutcome(msgspec.Struct):
    status: str  # "complete" | "interrupted" | "failed"
    failure: Invocation | None = None
    measured: list[Invocation] = msgspec.field(default_factory=list)
    elapsed_s: float = 0.0


class ShellCommandFailed(Exception):
    def __init__(self, what: str, command: str, code: int, stderr: str) -> None:
        super().__init__(f"{what} command {command!r} failed with exit code {code}")
        self.what, self.command, self.code, self.stderr = what, command, code, stderr


def run_shell(command: str, what: str, shell: list[str] | None = None) -> None:
    """Run a --prepare/--setup/--cleanup command through the shell, as hyperfine does: `shell` (-S/--shell's
    argv), else /bin/sh."""
    # In a group of its own, killed whole when duet is stopped: what it started no longer outlives duet.
    result = run_in_group([*(shell or ["/bin/sh"]), "-c", command])
    if result.returncode != 0:
        raise ShellCommandFailed(what, command, result.returncode, result.stderr[-2000:])


# should_continue(measured invocations so far, seconds since the first measured invocation) -> bool
StopRule = Callable[[list[Invocation], float], bool]
# certain(the same) -> how many more units (pairs) the stop rule, having just said go on, is sure to say go
# on for: it is asked again only after that many (a duet queues them to the launchers at once).
CertainRuns = Callable[[list[Invocation], float], int]


class Runner:
    def __init__(self, settings: RunSettings, should_continue: StopRule,
                 on_invocation: Callable[[Invocation], None],
                 on_activity: Callable[[list[Invocation]], None] | None = None,
                 on_invocations: Callable[[list[Invocation]], None] | None = None,
                 certain: CertainRuns | None = None,
                 stored_at: Callable[[], tuple[str, int] | None] | None = None,
                 stage: RunnerStage | None = None) -> None:
        self.s = settings
        # What this runner shares with the comparison's other runners (launchers, cgroups, scratch); None:
        # it makes its own for its run.
        self.stage = stage
        self.should_continue = should_continue
        self.certain = certain
        # Where the caller stores (store location, comparison id), once it does: queued pairs' answers are
        # then journaled for a `kill -9` of this process (execute/journal.py).
        self.stored_at = stored_at
        self.on_invocation = on_invocation
        # Both sides of a duet's pair are measured together: stored in one go (one transaction) where
        # the caller offers it, else one by one.
        self.on_invocations = on_invocations
        # aduet invocations overlap, so their activity is known only when a segment ends, after they
        # were stored: this is told which stored invocations got it.
        self.on_activity = on_activity
        self.schedule = Schedule(settings.seed, settings.cpus)
        self.measured: list[Invocation] = []
        self._last_warmup: list[Invocation] = []
        self._me: dict[str, Any] | None = None  # this process, as the journal's manifest names it
        self._t0: float | None = None
        self._servers: dict[int, LauncherServer] = {}
        #: Launchers given up on (`_give_up`): no longer the stage's, closed when this runner's run ends.
        self._retired: list[LauncherServer] = []
        self._gate: ReleaseGate | None = None
        self._workdir = Path(tempfile.gettempdir())
        self._stage: RunnerStage | None = None
        self._noise = NoiseWindows(on_activity, every_unit=settings.activity_every_pair)
        self._pipes = PipeSinks(self._workdir)
        self._meanwhile = Meanwhile(settings.during_warmup)
        self._steal = StealReadings()

    # -- helpers -----------------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return 0.0 if self._t0 is None else time.monotonic() - self._t0

    def _emit(self, inv: Invocation) -> None:
        self._emit_all([inv])

    def _emit_all(self, invocations: list[Invocation]) -> None:
        if invocations and all(inv.warmup for inv in invocations):
            self._last_warmup = invocations
        for inv in invocations:
            if inv.status == "signaled" and self._ignored(inv):
                inv.status = "failed"  # timed as a non-zero exit (usable counts it), its signal kept
            if not inv.warmup:
                if self._t0 is None:  # the launchers stamp with CLOCK_MONOTONIC, as time.monotonic reads
                    self._t0 = inv.start_ns / 1e9 if inv.start_ns else time.monotonic() - inv.wall_s
                self.measured.append(inv)
        if self.on_invocations is not None:
            self.on_invocations(invocations)
        else:
            for inv in invocations:
                self.on_invocation(inv)
        self._noise.stored()

    def _is_failure(self, inv: Invocation) -> bool:
        return not inv.ok and not self._ignored(inv)

    def _ignored(self, inv: Invocation) -> bool:
        """A failure --ignore-failure times: a non-zero exit or, as in hyperfine, a signal N (its exit code
        128 + N, model/invocation.py); never a timeout, nor a command that did not run."""
        return self.s.ignore_failure and inv.status in ("failed", "signaled") and (
            not self.s.ignore_exit_codes or inv.exit_code in self.s.ignore_exit_codes)

    def _prepare(self, side: str) -> None:
        command = self.s.prepare.get(side)
        if command:
            run_shell(command, f"--prepare ({side})", self.s.hook_shell)

    def _conclude(self, side: str) -> None:
        command = self.s.conclude.get(side)
        if command:
            run_shell(command, f"--conclude ({side})", self.s.hook_shell)

    def _spec(self, side: str, index: int, pair: int, warmup: bool, cpu: int,
              barrier: Path | None, cgroups: dict[str, SideCgroup | None]) -> LaunchSpec:
        # A's and B's index-th invocations share an environment size (plan/layout.py).
        where = "inherit" if self.s.show_output else self.s.output.get(side, "null")
        stdout: Path | None = None
        if where == "inherit":
            stdout = self._workdir / f"{side}.stdout"  # shown with its label once the invocation ended
        elif where == "pipe":
            stdout = self._pipes.path(side)
        elif where != "null":
            stdout = Path(where)
        group = cgroups.get(cgroup_key(side, cpu)) or cgroups.get(side)
        return LaunchSpec(argv=self.s.argv[side], side=side, index=index, pair=pair, warmup=warmup, cpu=cpu,
                          cpus=self.s.cpu_sets.get(cpu, ()), barrier=barrier,
                          barrier_timeout_s=self.s.barrier_timeout_s, timeout_s=self.s.timeout_s,
                          cgroup=ensured(group), env=env_offset(f"{self.s.seed}:{index}"),
                          stdout_path=stdout, stdin_path=Path(self.s.input_path) if self.s.input_path else None,
                          label=self.s.labels.get(side, side) if where == "inherit" else None)

    def stop_all(self) -> None:
        """Stop whatever runs (Ctrl-C): every launcher ends its command, answers, and exits."""
        for server in self._servers.values():
            server.terminate()
        for server in self._servers.values():
            server.process.wait()
        for server in self._retired:  # being given up on when Ctrl-C came: made sure to end
            server.end_stuck(ANSWER_GRACE_S)

    def _patience(self, barrier_waits: int) -> float | None:
        """How long to wait for a launcher's answer to one invocation before giving up on it (`_give_up`):
        --timeout, `barrier_waits` times the barrier's timeout (a child may wait that long for its partner
        before its command starts, and a queued one as long again before it is forked), and ANSWER_SLACK_S.
        None without --timeout: the command may run as long as it takes."""
        if not self.s.timeout_s:
            return None
        return self.s.timeout_s + barrier_waits * self.s.barrier_timeout_s + ANSWER_SLACK_S

    def _give_up(self, served: ServedInvocation, waited_s: float) -> None:
        """`served`'s launcher did not answer in time (`_patience`): it is stopped or stuck, and only we can
        end it. Ended with its command (`LauncherServer.end_stuck`); its answer, if it gave one on the way
        out, is then read as a timeout (`ServedInvocation.overdue_s`), and so is none at all. Its CPU gets a
        new launcher should anything run there next."""
        server = served.server
        served.overdue_s = waited_s
        for cpu, one in list(self._servers.items()):  # first: an interrupt meanwhile then ends it (stop_all)
            if one is server:
                del self._servers[cpu]
        if server not in self._retired:
            self._retired.append(server)
        server.end_stuck(ANSWER_GRACE_S)

    def _close_retired(self) -> None:
        for server in self._retired:
            server.close()
        self._retired = []

    def _cpus(self, cpu: int) -> int | tuple[int, ...]:
        """The CPUs a command keyed by `cpu` ran on: more than that one under --cpus-per-command."""
        return self.s.cpu_sets.get(cpu, cpu)

    def _server(self, cpu: int) -> LauncherServer:
        server = self._servers.get(cpu)
        if server is None:
            server = self._servers[cpu] = LauncherServer(self._workdir, f"cpu{cpu}", self._gate)
        return server

    # -- entry point -------------------------------------------------------------------------------
    def run(self) -> RunOutcome:
        settle()  # measuring begins: the orchestrator's start-up is over (startup.py)
        if self.stage is not None:
            return self._run_on(self.stage)
        with RunnerStage() as stage:
            return self._run_on(stage)

    def _run_on(self, stage: RunnerStage) -> RunOutcome:
        self._stage = stage
        self._meanwhile.first(lambda: self._first_batch_files(stage))
        cgroups = stage.cgroups_for(self.s)
        assert stage.workdir is not None
        with PipeSinks(stage.workdir) as pipes:
            self._workdir = stage.workdir
            self._pipes = pipes
            method = {"duet": self._run_duet, "aduet": self._run_aduet, "sequential": self._run_sequential}
            self._gate = stage.gate
            self._servers = stage.servers
            self._noise.resume(stage.noise)
            try:
                # The launchers start before the first invocation, so no launcher start-up is measured.
                for cpu in sorted(set(self.s.cpus)):
                    self._server(cpu)
                failure = method[self.s.method](cgroups)
            except KeyboardInterrupt:
                self.stop_all()
                self._noise.close()
                return RunOutcome("interrupted", None, self.measured, self._elapsed())
            finally:
                self._meanwhile.join()
                self._close_retired()
            stage.noise = self._noise.hand_on()
            status = "failed" if failure is not None else "complete"
            return RunOutcome(status, failure, self.measured, self._elapsed())

    def _filler(self, side: str, cpu: int) -> ServedInvocation:
        """An unmeasured re-run of ``side`` that keeps its CPU busy while the partner still runs."""
        spec = LaunchSpec(argv=self.s.argv[side], side=side, index=-1, pair=-1, warmup=True, cpu=cpu,
                          cpus=self.s.cpu_sets.get(cpu, ()))
        return self._server(cpu).start(spec, discard_output=True)

    @staticmethod
    def _end_filler(filler: ServedInvocation) -> None:
        filler.cancel()
        filler.wait()

    def _wait_pair(self, running: list[ServedInvocation]) -> list[Invocation]:
        """Wait for both sides of a pair, reading neither answer until both came: work of ours beside the
        side still running slows that side, so it always lands on the slower one (2 ms of it per pair
        took a 4.5 % difference at 20 ms to 6-9 %; docs/notes/duet_on_2cpus.md point 15). With ``fill``,
        the side that finishes first is re-run (unmeasured) until its partner finishes too, which needs
        its answer at once."""
        patience = self._patience(barrier_waits=1)
        deadline = None if patience is None else time.monotonic() + patience
        if not self.s.fill:
            for overdue in wait_all(running, deadline):
                self._give_up(overdue, patience or 0.0)
            return [r.wait() for r in running]
        first = wait_ready(running, deadline)
        if first is None:
            for overdue in running:
                self._give_up(overdue, patience or 0.0)
            return [r.wait() for r in running]
        other = next(r for r in running if r is not first)
        done = first.wait()
        cpu = first.spec.cpu if first.spec.cpu is not None else self.s.cpus[0]
        filler = self._filler(done.side, cpu) if done.ok else None
        while True:
            ready = wait_ready([other] if filler is None else [other, filler], deadline)
            if ready is None:
                self._give_up(other, patience or 0.0)
                break
            if ready is other:
                break
            assert filler is not None
            filler.wait()  # it finished on its own: the partner is much longer; go on filling
            filler = self._filler(done.side, cpu)
        late = other.wait()
        if filler is not None:
            self._end_filler(filler)
        return [done, late]

    def _withdraw(self, held: _HeldPair) -> None:
        """A pair sent ahead that will not run: let its held requests go unrun."""
        assert self._gate is not None
        self._gate.skip(len(held.running))
        for served in held.running:
            served.wait()

    def _run_duet(self, cgroups: dict[str, SideCgroup | None]) -> Invocation | None:
        with BarrierPage(parties=2) as barrier:
            pair = self.s.first

            def held_pair(number: int) -> _HeldPair:
                placement = self.schedule.next_duet_pair()
                warmup = number - self.s.first < self.s.warmup
                return _HeldPair(placement, [
                    self._server(placement.cpu[side]).start(
                        self._spec(side, number, number, warmup, placement.cpu[side], barrier.path, cgroups), hold=True)
                    for side in placement.order])

            # The next pair is sent as soon as this one ended, before the rest of the work between
            # pairs: the launchers fork its children at once, which then wait for the release
            # (native/launcher.c, run_child), so the forks (~0.1 ms) overlap the orchestrator's work
            # instead of following the release. If the stop rule then says stop, it is let go unrun.
            ahead: _HeldPair | None = None
            slots: BarrierPage | None = None
            try:
                while True:
                    warmup = pair - self.s.first < self.s.warmup
                    if not warmup:
                        self._meanwhile.join()
                        if not self.should_continue(self.measured, self._elapsed()):
                            if ahead is not None:
                                self._withdraw(ahead)
                            return None
                        count = self._queue_size() if ahead is None else 1
                        if count > 1:
                            slots = slots or self._slots()
                            failure, ran = self._run_queued(pair, count, slots, cgroups)
                            if failure is not None:
                                return failure
                            pair += ran
                            continue
                    ahead, failure = self._run_pair(pair, warmup, ahead, held_pair, barrier, cgroups)
                    if failure is not None:
                        return failure
                    pair += 1
            finally:
                if slots is not None:
                    slots.close()

    def _run_pair(self, pair: int, warmup: bool, ahead: _HeldPair | None, held_pair: Callable[[int], _HeldPair],
                  barrier: BarrierPage, cgroups: dict[str, SideCgroup | None]
                  ) -> tuple[_HeldPair | None, Invocation | None]:
        """One pair released by the orchestrator (the one sent ahead, if any); returns the pair sent ahead
        for the next and the failure, if any."""
        current = ahead if ahead is not None else held_pair(pair)
        ahead = None
        running = current.running
        for side in current.placement.order:
            self._prepare(side)
        barrier.reset()
        self._noise.open()
        steal_before = self._steal.before()
        try:
            assert self._gate is not None
            self._gate.release(len(running))
            if warmup:
                self._meanwhile.start()
            results = self._wait_pair(running)
        except KeyboardInterrupt:
            barrier.abort(ABORT_USER)
            raise
        # The next pair is sent ahead unless it will be queued with others (then it is sent with them).
        if all(inv.ok for inv in results) and (
                self.s.pairs_at_most is None
                or pair + 1 - self.s.first < self.s.warmup + self.s.pairs_at_most) and (
                pair + 1 - self.s.first < self.s.warmup or self._queue_size(pending=results) <= 1):
            ahead = held_pair(pair + 1)
        steal_after = self._steal.after(running)
        for inv in results:
            inv.steal_s = steal_delta(steal_before, steal_after, self._cpus(inv.cpu_requested))
        # machine-wide, so both sides of the pair share one record of the other processes
        self._noise.add(results)
        results.sort(key=lambda i: i.side)
        self._emit_all(results)
        failures = [inv for inv in results if self._is_failure(inv)]
        if failures:  # (not a partner's exit that --ignore-failure timed)
            return ahead, _root_cause(failures)
        for side in current.placement.order:
            self._conclude(side)
        return ahead, None

    def _queue_size(self, pending: Sequence[Invocation] = ()) -> int:
        """How many pairs to queue next (1: the orchestrator releases the next pair itself). Queued pairs
        need a stop rule that says how far it is sure to go on, no per-pair work of the orchestrator
        (hooks, fillers, output shown, activity read around every pair) and the method's own gate.
        `pending`: a pair just measured and not yet stored, counted as measured."""
        s = self.s
        if self.certain is None or not self._may_queue():
            return 1
        measured = [*self.measured, *(inv for inv in pending if not inv.warmup)]
        pairs = len(measured) // 2
        # A pair's time as the measured ones took (the slower side and the gaps), for the span's bound;
        # before any, as the last warm-up's slower side took.
        timed = measured or [inv for inv in (*pending, *self._last_warmup) if inv.start_ns and inv.end_ns]
        if not timed:
            return 1
        count = self.certain(measured, self._elapsed())
        if s.pairs_at_most is not None:
            count = min(count, s.pairs_at_most - pairs)
        per_unit = 2 if s.method == "sequential" else 1  # a round is both sides' invocations, one by one
        span_ns = max(inv.end_ns for inv in timed) - min(inv.start_ns for inv in timed)
        per_pair = max(span_ns / 1e9 / pairs if pairs else span_ns / 1e9 * per_unit, 1e-4)
        # Each launcher's requests must fit in its request pipe (LauncherServer.capacity): a request holds
        # the command line, an environment offset of up to a page (plan/layout.py) and a few paths.
        request = max(sum(len(arg) + 5 for arg in argv) for argv in s.argv.values()) + 4096 + 1024
        fits = min(self._server(cpu).capacity for cpu in set(s.cpus)) // request // per_unit
        return max(1, min(count, QUEUE_MAX_PAIRS, fits, int(QUEUE_SPAN_S / per_pair)))

    def _may_queue(self) -> bool:
        """Do the settings let this runner queue units (and the stop rule say how far, `certain`)?"""
        s = self.s
        return (s.method in ("duet", "sequential") and not s.fill
                and not s.activity_every_pair and not s.show_output
                and not any(s.prepare.get(side) or s.conclude.get(side) for side in s.argv)
                and not any(s.output.get(side) == "inherit" for side in s.argv))

    def _first_batch_files(self, stage: RunnerStage) -> None:
        """Beside the warm-up, where the orchestrator only waits: the stderr files of the first batch of
        queued pairs, as many as the stop rule is sure to ask for (~6 ms for 64 pairs' on a 2-vCPU Intel
        Xeon VM, which the first batch's start waited for)."""
        if self.certain is None or not self._may_queue():
            return
        count = min(QUEUE_MAX_PAIRS, self.certain([], 0.0))
        units = [(cpu, slot) for slot in range(count) for cpu in sorted(set(self.s.cpus))] \
            if self.s.method == "duet" else [(self.s.cpus[1], slot) for slot in range(2 * count)]
        for cpu, slot in units:
            stage.queued_stderr(cpu, slot)

    def _slots(self) -> BarrierPage:
        """The barrier file of queued requests: a page per duet pair (two parties), or per sequential
        invocation (one party: it only carries the halt), and the halt page."""
        if self.s.method == "duet":
            return BarrierPage(parties=2, pages=QUEUE_MAX_PAIRS + 1)
        return BarrierPage(parties=1, pages=2 * QUEUE_MAX_PAIRS + 1)

    def _run_queued(self, first: int, count: int, slots: BarrierPage, cgroups: dict[str, SideCgroup | None]
                    ) -> tuple[Invocation | None, int]:
        """`count` measured pairs (sequential: rounds) queued to the launchers in one write each: each
        launcher runs its requests one after another — a duet's side of one pair after another, both
        children of a pair meeting at the pair's own page of `slots`; a sequential round's invocations,
        each at a page of its own with one party — and answers each in turn; the orchestrator sleeps until
        every launcher answered its last, then reads and stores them all (one transaction). A failure
        halts the rest (the launchers answer them ``skipped``). Returns the failure, if any, and how many
        pairs (rounds) ran and were stored."""
        halt = slots.pages - 1
        where = self.stored_at() if self.stored_at is not None else None
        journals = {cpu: self._workdir / f"journal-cpu{cpu}.jsonl" for cpu in set(self.s.cpus)} if where else {}
        lists: dict[int, list[tuple[LaunchSpec, Queued]]] = {}
        # What is stored together and judged as one: a duet's pair, a sequential invocation (as unqueued).
        units: list[list[tuple[int, int]]] = []
        duet = self.s.method == "duet"
        stage = self._stage
        assert stage is not None  # set by _run_on

        def queue(side: str, cpu: int, number: int, slot: int) -> tuple[int, int]:
            spec = self._spec(side, number, number, False, cpu, slots.path, cgroups)
            mine = lists.setdefault(cpu, [])
            mine.append((spec, Queued(slot=slot, halt_slot=halt, halt_failed=not self.s.ignore_failure,
                                      stderr_path=stage.queued_stderr(cpu, slot),
                                      hold=slot == 0 and duet, meet=duet and slot > 0,
                                      journal=journals.get(cpu))))
            return cpu, len(mine) - 1

        if duet:
            for k in range(count):
                placement = self.schedule.next_duet_pair()
                units.append([queue(side, placement.cpu[side], first + k, k) for side in placement.order])
        else:
            for k in range(count):
                for side in (s for s in self.schedule.next_round_order() if s in self.s.argv):
                    units.append([queue(side, self.s.cpus[1], first + k, len(units))])
        slots.reset(*range(len(units)), halt)
        for mine in lists.values():  # each launcher says when it answered its last
            mine[-1] = (mine[-1][0], msgspec.structs.replace(mine[-1][1], notify=True))
        if where is not None:
            self._journal(journal.begin, self._workdir, journal.Manifest(
                store=os.path.abspath(where[0]), comparison_id=where[1], first_pair=first,
                owner=self._owner(),
                journals={str(cpu): str(path) for cpu, path in journals.items()},
                requests={str(cpu): [journal.QueuedRequest(spec.side, spec.index, spec.pair) for spec, _ in requests]
                          for cpu, requests in lists.items()}))
        self._noise.open()
        steal = self._steal.before()
        made = {cpu: self._server(cpu).prepare(requests) for cpu, requests in lists.items()}
        for cpu, (sent, message) in made.items():
            self._server(cpu).send(message, len(sent))
        served = {cpu: sent for cpu, (sent, _) in made.items()}
        assert self._gate is not None
        servers = {cpu: self._server(cpu) for cpu in served}
        # Its answers come one by one: the patience is for each (a duet's child may wait to be forked, then
        # at the barrier).
        patience = self._patience(barrier_waits=2 if duet else 0)
        try:
            self._gate.release(sum(queued.hold for requests in lists.values() for _, queued in requests))
            finished, overdue = wait_done(self._gate, list(servers.values()), patience)
            if not finished:
                # A launcher is gone (or stopped answering): its partner's next child would wait at its page
                # for the barrier's timeout (10 s by default). Halt the batch and abort every page: the rest
                # ends at once.
                slots.abort(ABORT_EXITED, halt)
                for slot in range(len(units)):
                    slots.abort(ABORT_EXITED, slot)
                for cpu, server in servers.items():
                    if server in overdue:  # the first request it has not answered is the one it is stuck on
                        self._give_up(served[cpu][server.answered()], patience or 0.0)
        except KeyboardInterrupt:
            # The launchers end the invocation in progress and answer it; what ended before is kept.
            self.stop_all()
            self._store_queued(served, units, steal, interrupted=True)
            self._journal(journal.end, self._workdir)
            raise
        failure, kept = self._store_queued(served, units, steal)
        self._journal(journal.end, self._workdir)
        return failure, len({inv.pair for inv in kept})

    def _owner(self) -> dict[str, Any]:
        if self._me is None:
            self._me = Owner.me().to_json()
        return self._me

    @staticmethod
    def _journal(step: Callable[..., None], *args: object) -> None:
        """A step of the journal; the scratch directory gone or full only costs the batch its journal (the
        launchers, which write their stderr there too, then say what went wrong)."""
        try:
            step(*args)
        except OSError:
            pass

    def _store_queued(self, served: dict[int, list[ServedInvocation]], units: list[list[tuple[int, int]]],
                      steal: dict[int, float], *, interrupted: bool = False
                      ) -> tuple[Invocation | None, list[Invocation]]:
        """Read a batch's answers, and store its units (pairs, or sequential invocations) up to the first
        that did not run (halted, or cut short by an interrupt) and up to and including a failed one."""
        answers = {cpu: [one.wait() for one in queue] for cpu, queue in served.items()}
        overdue = [answers[cpu][k] for cpu, queue in served.items() for k, one in enumerate(queue)
                   if one.overdue_s is not None and answers[cpu][k].status == "timeout"]
        kept: list[Invocation] = []
        failure: Invocation | None = None
        ran = 0
        for unit in units:
            results = [answers[cpu][k] for cpu, k in unit]
            if any(inv.status in _NOT_RUN for inv in results) or (
                    interrupted and any(inv.status in _CUT_SHORT for inv in results)):
                break
            after = self._steal.after([served[cpu][k] for cpu, k in unit])
            for inv in results:
                inv.steal_s = steal_delta(steal, after, self._cpus(inv.cpu_requested))
            steal = after
            results.sort(key=lambda i: i.side)
            kept += results
            ran += 1
            failures = [inv for inv in results if self._is_failure(inv)]
            if failures:
                failure = _root_cause(failures)
                break
        if kept:
            self._noise.add(kept, units=ran)
            self._emit_all(kept)
        if failure is None and overdue and not interrupted:
            # Its launcher stopped between two invocations (its partner's was then halted, not run, and the
            # pair is not stored): the comparison still ends there, as at a launcher's own timeout (stored,
            # a timeout is a failure and set above).
            failure = overdue[0]
        return failure, kept

    def _run_sequential(self, cgroups: dict[str, SideCgroup | None]) -> Invocation | None:
        cpu = self.s.cpus[1]
        round_ = self.s.first
        slots: BarrierPage | None = None
        try:
            while True:
                warmup = round_ - self.s.first < self.s.warmup
                if not warmup:
                    self._meanwhile.join()
                    if not self.should_continue(self.measured, self._elapsed()):
                        return None
                    count = self._queue_size()
                    if count > 1:
                        slots = slots or self._slots()
                        failure, ran = self._run_queued(round_, count, slots, cgroups)
                        if failure is not None:
                            return failure
                        round_ += ran
                        continue
                failure = self._run_round(round_, warmup, cpu, cgroups)
                if failure is not None:
                    return failure
                round_ += 1
        finally:
            if slots is not None:
                slots.close()

    def _run_round(self, round_: int, warmup: bool, cpu: int, cgroups: dict[str, SideCgroup | None]
                   ) -> Invocation | None:
        """One sequential round released invocation by invocation; the failure, if any."""
        # One command on its own (`duet compare CMD`) has only side A: its rounds are its runs.
        for side in (s for s in self.schedule.next_round_order() if s in self.s.argv):
            self._prepare(side)
            self._noise.open()
            steal_before = self._steal.before()
            running = self._server(cpu).start(self._spec(side, round_, round_, warmup, cpu, None, cgroups))
            if warmup:
                self._meanwhile.start()
            patience = self._patience(barrier_waits=0)
            if patience is not None:
                for overdue in wait_all([running], time.monotonic() + patience):
                    self._give_up(overdue, patience)
            inv = running.wait()
            inv.steal_s = steal_delta(steal_before, self._steal.after([running]), self._cpus(cpu))
            self._noise.add([inv])
            self._emit(inv)
            if self._is_failure(inv):
                return inv
            self._conclude(side)
        return None

    def _run_aduet(self, cgroups: dict[str, SideCgroup | None]) -> Invocation | None:
        """Both sides invoke back to back on their own CPU, never waiting for each other (Drozdík 2023 §3).

        Invocations come in segments of ADUET_SEGMENT per side. At a segment's end the CPUs are drawn
        again, so that a fixed difference between the two CPUs averages out as in the synchronous duet;
        the side that finishes its segment first is kept busy (``fill``) until the other finishes."""
        count = {"A": 0, "B": 0}
        segment = 0
        patience = self._patience(barrier_waits=0)
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
            measuring: dict[str, tuple[ServedInvocation, dict[int, float]]] = {}
            fillers: dict[str, ServedInvocation] = {}
            due: dict[str, float] = {}  # each side's invocation in progress: when to give up on its launcher

            # launch and fill are called only within this segment, so they see this segment's state (B023
            # warns of closures outliving their loop iteration; these do not).
            def launch(side: str) -> None:
                self._prepare(side)
                index = count[side]
                if index >= self.s.warmup:
                    self._meanwhile.join()
                spec = self._spec(side, index, segment, index < self.s.warmup, cpu[side], None, cgroups)  # noqa: B023
                steal = read_steal_seconds()
                measuring[side] = (self._server(cpu[side]).start(spec), steal)  # noqa: B023
                if patience is not None:
                    due[side] = time.monotonic() + patience  # noqa: B023
                if index < self.s.warmup:
                    self._meanwhile.start()
                count[side] += 1
                left[side] -= 1  # noqa: B023

            def fill(side: str) -> None:
                fillers[side] = self._filler(side, cpu[side])  # noqa: B023

            for side in self.schedule.next_round_order():
                launch(side)
            failure: Invocation | None = None
            while measuring:
                ready = wait_ready([m[0] for m in measuring.values()] + list(fillers.values()),
                                    min((due[side] for side, (running, _) in measuring.items()
                                         if side in due and running.overdue_s is None), default=None))
                if ready is None:
                    now = time.monotonic()
                    for side, (running, _) in measuring.items():
                        if due[side] <= now and running.overdue_s is None:
                            self._give_up(running, patience or 0.0)
                    continue
                side = ready.spec.side
                if fillers.get(side) is ready:  # a filler ended on its own while the partner still runs: fill again
                    fillers.pop(side).wait()
                    fill(side)
                    continue
                running, steal = measuring.pop(side)
                inv = running.wait()
                # its CPU's steal as its launcher read it on reaping: no /proc/stat read beside the partner
                after = dict([running.steal_at_end]) if running.steal_at_end else read_steal_seconds()
                inv.steal_s = steal_delta(steal, after, self._cpus(inv.cpu_requested))
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
            noise = window.stop_json()
            for inv in emitted:
                inv.activity = noise
            if self.on_activity is not None and emitted:
                self.on_activity(emitted)
            if failure is not None:
                return failure
            segment += 1


class _HeldPair(msgspec.Struct):
    """A duet pair's placement and its sides' requests, sent and held at the gate, in launch order."""

    placement: PairPlacement
    running: list[ServedInvocation]


#: Answers of queued invocations that did not run: halted after a failed pair (and the partner aborted at
#: its page), or never started.
_NOT_RUN = frozenset({"skipped"})
#: ... and, once the orchestrator was interrupted, what the launchers' stop cut short or left unanswered.
_CUT_SHORT = frozenset({"interrupted", "launch_error", "barrier_aborted", "barrier_timeout"})


def _root_cause(results: list[Invocation]) -> Invocation:
    """Of a failed pair, the invocation that failed first-hand (not the partner aborted by it)."""
    primary = [r for r in results if r.status not in ("ok", "barrier_aborted", "barrier_timeout")]
    return (primary or [r for r in results if not r.ok])[0]
