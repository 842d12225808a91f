"""Executes one planned run of a campaign: launch the side(s), wait, collect outputs, parse iterations.

Every side goes through `duet-launch` (pinning, subreaper, timeout, clean-up of the whole tree).
For both duet methods the launchers meet at a start barrier, so the harnesses start within about a
microsecond; for the synchronous duet the barrier page also goes to the harness hooks
(``DUET_BARRIER``), which then meet before every iteration. Each side gets its own output directory
(``{outdir}``) holding its stdout, stderr, iteration log and collected result files — the raw
outputs are kept, whatever happens to the parsing.
"""
from __future__ import annotations

import os
import re
import select
import shlex
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from duetbench.analyze.stopping import StoppingParams
from duetbench.execute.backends.local import cpus_per_command
from duetbench.execute.barrier import ABORT_EXITED, ABORT_USER, BarrierPage
from duetbench.execute.container import (
    ContainerEngine,
    container_argv,
    end_container_now,
    exit_reason,
    forget_containers,
    note_container,
    remove_container,
    remove_container_cgroups,
    user_key,
)
from duetbench.execute.container_user import Grant, grant, lend_path
from duetbench.execute.invocation import Invocation, LaunchSpec, RunningInvocation
from duetbench.execute.live import Inotify, LiveWarmup
from duetbench.execute.waits import ANSWER_GRACE_S, ANSWER_SLACK_S, poll_ms, wait_any
from duetbench.host.activity import ActivityWindow
from duetbench.host.cgroup import SideCgroup
from duetbench.host.host import usable_cpus
from duetbench.plan.campaign import PlannedRun
from duetbench.plan.layout import env_offset
from duetbench.plan.schedule import keyed_cpu_sets

STDOUT = "stdout.txt"
STDERR = "stderr.txt"
ITERATION_LOG = "iterations.log"


class SideLike(Protocol):
    command: str
    shell: bool
    cwd: Path
    env: dict[str, str]


@dataclass
class SideResult:
    side: str
    invocation: Invocation
    outdir: Path
    files: dict[str, Path] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    #: What the side's duet hook said it could not open (its barrier page, its iteration log), from its
    #: stderr: why a run has no iterations or ran unsynchronized ("" if it said nothing of the kind).
    hook_problem: str = ""


@dataclass
class RunExecution:
    run: PlannedRun
    run_dir: Path
    started: float
    finished: float
    sides: dict[str, SideResult]
    interrupted: bool = False
    #: The barrier page's abort code when the run ended before the first side exited (0: never aborted).
    barrier_abort: int = 0
    #: Dynamic warmup followed this run's logs (None: not asked for); `stopped_early`: it ended the run.
    live: LiveWarmup | None = None
    stopped_early: bool = False
    #: Sync duet: how often the hooks' barrier released both sides (the launchers' start barrier not
    #: counted), the evidence that iterations were synchronized (sync_check.py); None for other methods.
    barrier_releases: int | None = None
    #: Sync duet: parties left waiting at the barrier when the run ended (analyze/sync.py).
    barrier_waiting: int = 0


def _render(template: str, values: dict[str, str]) -> str:
    from duetbench.config.campaign import render

    return render(template, **values)


def side_argv(command: str, shell: bool) -> list[str]:
    return ["/bin/sh", "-c", command] if shell else shlex.split(command)


def _command_argv(template: str, shell: bool, values: dict[str, str]) -> list[str]:
    """A side's argv for this run. Without a shell the command is split before its placeholders are filled
    in: an {outdir} under a directory with a space stays one argument, as written."""
    if shell:
        return side_argv(_render(template, values), True)
    return [_render(word, values) for word in side_argv(template, False)]


def execute_run(run: PlannedRun, bench: object, run_dir: Path, *, campaign_id: int,
                engine: ContainerEngine | None = None, use_cgroups: bool = True,
                show_output: bool = False, warmup_params: StoppingParams | None = None) -> RunExecution:
    """Launch the run's side(s) and wait for them; raises KeyboardInterrupt after stopping them cleanly."""
    sides_spec: dict[str, SideLike] = bench.sides  # type: ignore[attr-defined]
    timeout_s: float = bench.timeout_s  # type: ignore[attr-defined]
    barrier_timeout_s: float = bench.barrier_timeout_s  # type: ignore[attr-defined]
    results: list[str] = list(bench.results)  # type: ignore[attr-defined]
    run_dir.mkdir(parents=True, exist_ok=True)
    # A container sees the host's /dev/shm only (execute/container.py): no other directory for its page.
    in_containers = any(getattr(sides_spec[side], "container", None) is not None for side in run.sides)
    page = (BarrierPage(parties=len(run.sides), directory="/dev/shm" if in_containers else None)
            if run.method in ("duet", "aduet") else None)
    usable = usable_cpus()  # where it runs: a Slurm node maps the plan's CPUs onto its own (slurm/task.py)
    cpu_sets = keyed_cpu_sets(usable, cpus_per_command(bench, usable))
    cgroups: dict[str, SideCgroup | None] = {
        # The pid makes the name unique on the machine: two campaigns with the same id in different
        # databases (tests, Slurm tasks of one campaign on one box) must never share a cgroup, whose
        # clean-up (cgroup.kill) would end the other's processes.
        side: (SideCgroup.create(f"duetbench-{os.getpid()}-c{campaign_id}-{run.position}-{side}")
               if use_cgroups else None)
        for side in run.sides}
    started = time.time()
    running: dict[str, RunningInvocation] = {}
    outdirs: dict[str, Path] = {}
    containers: list[str] = []
    grants: list[Grant] = []  # output directories lent to a container's non-root user, for this run
    page_users: set[int] = set()
    interrupted = False
    barrier_abort = 0
    live: LiveWarmup | None = None
    stopped_early = False
    barrier_releases: int | None = None
    barrier_waiting = 0
    activity = ActivityWindow()  # other processes' CPU during the run: machine-wide, one record for all sides
    activity.start()
    try:
        for side in run.sides:
            spec = sides_spec[side]
            outdir = run_dir / side
            outdir.mkdir(exist_ok=True)
            outdirs[side] = outdir
            values = {"outdir": str(outdir), "side": side, "benchmark": run.benchmark, "method": run.method,
                      "run": run.key.replace("/", "-")}
            # A's and B's runs of one repetition share an environment size (plan/layout.py); the
            # benchmark's own environment comes last, so a user may set the offset themselves.
            env = {**env_offset(f"{run.benchmark}/{run.method}/{run.repetition}"),
                   **{k: _render(v, values) for k, v in spec.env.items()}}
            env.update({"DUET_SIDE": side, "DUET_ITERATION_LOG": str(outdir / ITERATION_LOG),
                        "DUET_BARRIER_TIMEOUT_MS": str(int(barrier_timeout_s * 1000))})
            if run.method == "duet" and page is not None:
                env["DUET_BARRIER"] = str(page.path)
            argv = _command_argv(spec.command, spec.shell, values)
            container = getattr(spec, "container", None)
            if container is not None:
                if engine is None:
                    raise RuntimeError("a container benchmark needs a container engine")
                containers.append(f"duetbench-{os.getpid()}-{campaign_id}-{run.position}-{side}")
                note_container(engine, containers[-1])
                uid = engine.users.get(user_key(container))
                if uid is not None:  # the image's USER is not root (container_user.py)
                    grants += lend_path(outdir, spec.cwd, uid)
                    if page is not None and run.method == "duet" and uid not in page_users:
                        page_users.add(uid)
                        grant(page.path, uid)  # removed with the page
                argv = container_argv(engine, container, argv, cpu=cpu_sets.get(run.cpus[side], run.cpus[side]),
                                      cwd=spec.cwd, env=env,
                                      mounts=[outdir], cgroup=cgroups[side], name=containers[-1])
            launch = LaunchSpec(argv=argv, side=side, index=run.repetition, pair=run.position, warmup=False,
                                cpu=run.cpus[side], cpus=cpu_sets.get(run.cpus[side], ()),
                                barrier=page.path if page else None,
                                barrier_timeout_s=barrier_timeout_s, timeout_s=timeout_s, cgroup=cgroups[side],
                                show_output=show_output, env=env, cwd=spec.cwd,
                                stdout_path=outdir / STDOUT, stderr_path=outdir / STDERR)
            running[side] = RunningInvocation(launch, run_dir)
        # The launchers end a side at its timeout; one stopped by its harness (`kill -STOP $PPID`) or stuck
        # cannot, and only this wait can notice: given up on after the timeout, a wait at the start barrier
        # and some slack (as the comparisons' runner does, execute/waits.py ANSWER_SLACK_S).
        patience = timeout_s + barrier_timeout_s + ANSWER_SLACK_S if timeout_s else None
        if warmup_params is not None:
            live = LiveWarmup(warmup_params, {side: outdirs[side] / ITERATION_LOG for side in run.sides})
            invocations, barrier_abort, stopped_early = _wait_all_live(
                running, page, live, [outdirs[side] / ITERATION_LOG for side in run.sides], patience, in_containers)
        else:
            invocations, barrier_abort = _wait_all(running, page, patience)
    except KeyboardInterrupt:
        interrupted = True
        if page is not None:
            page.abort(ABORT_USER)
        for r in running.values():
            r.terminate()
        invocations = {side: r.wait() for side, r in running.items()}
    finally:
        if page is not None:
            if run.method == "duet":
                barrier_releases = max(page.generation - 1, 0)
                barrier_waiting = page.waiting
            page.close()
        left = [name for name in containers if not remove_container(engine, name)]  # type: ignore[arg-type]
        if containers and not left:
            forget_containers()  # else kept: once this process has ended, the next `duet` command removes them
        for lent in reversed(grants):  # a directory lent to both sides: the first grant has its old ACL
            lent.revoke(give_back=not left and lent.path in outdirs.values())
        for group in cgroups.values():
            if group is not None:
                group.remove()
                if containers:
                    remove_container_cgroups(group.path.name)
    noise = activity.stop_json()
    sides: dict[str, SideResult] = {}
    for side, inv in invocations.items():
        inv.activity = noise
        if inv.status == "failed" and not inv.error and getattr(sides_spec[side], "container", None) is not None:
            inv.error = exit_reason(inv.exit_code)
        spec = sides_spec[side]
        values = {"outdir": str(outdirs[side]), "side": side, "benchmark": run.benchmark, "method": run.method,
                  "run": run.key.replace("/", "-")}
        files, missing = _collect(results, values, spec.cwd, outdirs[side])
        sides[side] = SideResult(side, inv, outdirs[side], files, missing, _hook_problem(outdirs[side] / STDERR))
    execution = RunExecution(run, run_dir, started, time.time(), sides, interrupted, barrier_abort, live,
                             stopped_early, barrier_releases, barrier_waiting)
    if interrupted:
        raise _Interrupted(execution)
    return execution


#: The duet hooks' (adapters/c/duet.h, DuetHook.java) complaints about what they could not open or use.
_HOOK_PROBLEM = re.compile(r"cannot \w+ the (?:barrier|iteration log) (DUET_BARRIER|DUET_ITERATION_LOG)=")


def _hook_problem(stderr: Path, head: int = 65536) -> str:
    """The hook's complaints in a side's stderr, one per file, each cut at its "; going on" tail. Read from
    the start: the hook says it at the first iteration, before a chatty harness's own output."""
    try:
        with open(stderr, "rb") as f:
            text = f.read(head).decode(errors="replace")
    except OSError:
        return ""
    said: dict[str, str] = {}
    for line in text.splitlines():
        match = _HOOK_PROBLEM.search(line)
        if match is not None:
            said.setdefault(match.group(1), line.strip().partition("; ")[0])
    return "; ".join(said.values())


class _Interrupted(KeyboardInterrupt):
    def __init__(self, execution: RunExecution) -> None:
        super().__init__()
        self.execution = execution


def _give_up(running: dict[str, RunningInvocation], pending: dict[int, str], patience: float | None) -> None:
    """End the launchers of the sides still `pending` past their deadline (`RunningInvocation.end_stuck`):
    each is then read as a timeout."""
    for side in pending.values():
        running[side].end_stuck(patience or 0.0, ANSWER_GRACE_S)


def _wait_all(running: dict[str, RunningInvocation], page: BarrierPage | None, patience: float | None = None
              ) -> tuple[dict[str, Invocation], int]:
    """Sleep until every side has exited, or until `patience` seconds (None: no limit) have passed, when
    the sides still running are given up on (`_give_up`). When the first side exits, abort the barrier
    page: a partner still waiting for it at the next iteration must not wait out its timeout (the launcher
    does the same; doing it here too covers a launcher that died). Returns the page's abort code as it was
    when the first side exited: anything but 0 or "exited" means synchronization was lost mid-run."""
    pending = {r.pid: side for side, r in running.items()}
    exited: list[str] = []
    abort_seen = 0
    deadline = None if patience is None else time.monotonic() + patience
    while pending:
        pid = wait_any(set(pending), deadline)
        if page is not None and not exited:
            abort_seen = page.aborted
        if pid is None:
            _give_up(running, pending, patience)  # each ended (and reaped) now
            exited += pending.values()
            break
        side = pending.pop(pid)
        exited.append(side)
        if page is not None and pending:
            page.abort(ABORT_EXITED)
    # The answers are read once every side has exited: work of ours beside a side still running (its
    # last iteration, say) slows it (docs/notes/duet_on_2cpus.md point 15).
    return {side: running[side].wait() for side in exited}, abort_seen


def _wait_all_live(running: dict[str, RunningInvocation], page: BarrierPage | None, live: LiveWarmup,
                   logs: list[Path], patience: float | None = None, in_containers: bool = False
                   ) -> tuple[dict[str, Invocation], int, bool]:
    """`_wait_all`, also waking when the logs grow (inotify), to let dynamic warmup end the run.

    While warmup is undecided the orchestrator wakes once per logged iteration; once it is decided it
    stops watching and sleeps until about when measurement should be over (then checks again), so the
    measured iterations are not disturbed by it."""
    watch = Inotify(logs)
    pending = {r.pid: side for side, r in running.items()}
    try:
        fds = {os.pidfd_open(pid): pid for pid in pending}
    except (AttributeError, OSError):
        watch.close()
        return (*_wait_all(running, page, patience), False)
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    if watch.fd is not None:
        poller.register(watch.fd, select.POLLIN)
    done: dict[str, Invocation] = {}
    abort_seen = 0
    stopped = False
    deadline = None if patience is None else time.monotonic() + patience
    try:
        while pending:
            timeout_ms: float | None = None if watch.fd is not None else 100
            wait = live.seconds_to_end()
            if wait is not None and not stopped:
                if watch.fd is not None:
                    poller.unregister(watch.fd)
                    watch.close()
                timeout_ms = max(wait * 1000, 20)
            if deadline is not None:
                left_ms = poll_ms(deadline)
                timeout_ms = left_ms if timeout_ms is None else min(timeout_ms, left_ms)
            events = poller.poll(timeout_ms)
            exited = [fds[fd] for fd, _ in events if fd in fds and fds[fd] in pending]
            if not exited and deadline is not None and time.monotonic() >= deadline:
                _give_up(running, pending, patience)
                exited, deadline = list(pending), None  # each ended now
            if not stopped and (watch.fd is None or any(fd == watch.fd for fd, _ in events)):
                watch.drain()
                if live.update():
                    stopped = True
                    for side in pending.values():
                        running[side].terminate()
                    if in_containers:
                        for side in pending.values():
                            end_container_now(running[side].spec.cgroup)
            for pid in exited:
                side = pending.pop(pid)
                if page is not None and not done:
                    abort_seen = page.aborted
                done[side] = running[side].wait()
                if page is not None and pending:
                    page.abort(ABORT_EXITED)
        if not stopped:
            live.update()  # the last lines, for the record
    finally:
        for fd in fds:
            os.close(fd)
        watch.close()
    return done, abort_seen, stopped


def _collect(results: list[str], values: dict[str, str], cwd: Path, outdir: Path) -> tuple[dict[str, Path], list[str]]:
    """Copy the declared result files into the side's output directory (unless already there).

    A file the harness did not write stays among the files, at the path it was expected: the parser then
    says it was not found there, instead of that it was never declared (or reading stdout instead)."""
    files: dict[str, Path] = {}
    missing: list[str] = []
    for declared in results:
        path = Path(_render(declared, values))
        if not path.is_absolute():
            path = cwd / path
        if not path.exists():
            missing.append(declared)
            files[declared] = path
            continue
        try:
            path.resolve().relative_to(outdir.resolve())
            files[declared] = path
        except ValueError:
            target = outdir / "results" / path.name
            if target in files.values() or target.exists():  # /x/out.json and /y/out.json: both are kept
                target = target.with_name(f"{len(files)}-{path.name}")
            target.parent.mkdir(exist_ok=True)
            if path.is_dir():
                shutil.copytree(path, target, dirs_exist_ok=True)
            else:
                shutil.copy2(path, target)
            files[declared] = target
    return files, missing

