"""Waiting for launchers' answers and for processes, each wait with an optional deadline (time.monotonic()).

Shared by the comparison's runner, the campaign runs and `duet measure`: all sleep in poll() on the
pipes or pidfds of what they wait for, never beside a measured command in a loop of their own.
"""
from __future__ import annotations

import math
import os
import select
import time

from duetbench.execute.invocation import LauncherServer, ReleaseGate, ServedInvocation

#: How much longer than --timeout (and the barrier waits an invocation may make before its command starts)
#: the orchestrator waits for a launcher's answer before it gives up on that launcher. The launcher enforces
#: --timeout itself and answers as soon as it has killed and reaped the command, unless it is stopped (a
#: command that runs `kill -STOP $PPID`: its own timer then fires unseen) or stuck, which nothing but the
#: orchestrator can notice: it waited for ever. The slack is for a launcher slow to kill and reap on a busy
#: machine; one given up on that way still counts as the timeout it was. Without --timeout the orchestrator
#: waits as long as the command runs, as told (Ctrl-C still ends it, stopped launcher or not), and the
#: barrier's timeout does not bound that: it bounds a child's wait for its partner before its command starts.
ANSWER_SLACK_S = 5.0
#: ... and how long a launcher so given up on may take to end its command and exit once told to (SIGTERM and
#: SIGCONT) before it is killed, and its command with it.
ANSWER_GRACE_S = 5.0

#: The longest timeout poll() takes (a C int of milliseconds, ~24.8 days): a longer wait (--timeout 1e7) is
#: waited in such steps, each caller looking at its deadline again after each (poll raised OverflowError).
_POLL_MAX_MS = 2**31 - 1


def poll_ms(deadline: float | None) -> int:
    """poll()'s timeout until `deadline` (time.monotonic()): -1 (none) for None."""
    if deadline is None:
        return -1
    return min(_POLL_MAX_MS, max(0, math.ceil((deadline - time.monotonic()) * 1000)))


def wait_all(running: list[ServedInvocation], deadline: float | None = None) -> list[ServedInvocation]:
    """Sleep until every one of ``running`` has its result (or its launcher died), or until `deadline`
    (time.monotonic(); None: none). Returns those still without a result then."""
    poller = select.poll()
    waiting = {}
    for r in running:
        poller.register(r.fileno(), select.POLLIN)
        waiting[r.fileno()] = r
    while waiting:
        ready = poller.poll(poll_ms(deadline))
        if not ready and deadline is not None and time.monotonic() >= deadline:
            return list(waiting.values())
        for fd, _ in ready:
            poller.unregister(fd)
            waiting.pop(fd, None)
    return []


def wait_ready(running: list[ServedInvocation], deadline: float | None = None) -> ServedInvocation | None:
    """Sleep until one of ``running`` has its result (or its launcher died) and return it; None once
    `deadline` (time.monotonic(); None: none) has passed without."""
    poller = select.poll()
    by_fd = {}
    for r in running:
        by_fd[r.fileno()] = r
        poller.register(r.fileno(), select.POLLIN)
    while True:
        ready = poller.poll(poll_ms(deadline))
        if ready:
            return by_fd[ready[0][0]]
        if deadline is not None and time.monotonic() >= deadline:
            return None


def wait_any(pids: set[int], deadline: float | None = None) -> int | None:
    """Sleep until one of ``pids`` has exited and return it, leaving it unreaped for Popen; None once
    `deadline` (time.monotonic(); None: none) has passed without.

    Waits on pidfds of exactly these processes, so other children of this process (a test runner's,
    say) can neither wake nor confuse it; without pidfds (Linux < 5.3), on any child, and then with no
    deadline (waitid cannot wait for a while: such a kernel keeps the waits of before)."""
    try:
        fds = {os.pidfd_open(pid): pid for pid in pids}
    except (AttributeError, OSError):
        return _wait_any_child(pids)
    try:
        poller = select.poll()
        for fd in fds:
            poller.register(fd, select.POLLIN)
        while True:
            ready = poller.poll(poll_ms(deadline))
            if ready:
                return fds[ready[0][0]]
            if deadline is not None and time.monotonic() >= deadline:
                return None
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


def wait_done(gate: ReleaseGate | None, servers: list[LauncherServer], patience: float | None = None
               ) -> tuple[bool, list[LauncherServer]]:
    """Sleep until each of `servers` answered its last queued request (a byte each on the gate's done
    pipe; True) or one of them is gone (its result pipe hangs up; False): not woken by the answers before.
    With `patience` (seconds; None: none), also (False, those) once launchers with requests left answered
    none for that long: woken every quarter of it to look (`LauncherServer.answered`), it notices one
    between 1 and 1.25 times `patience` after its last answer, never sooner."""
    assert gate is not None
    poller = select.poll()
    poller.register(gate.done_fd, select.POLLIN)
    for server in servers:
        poller.register(server.fileno(), 0)  # hang-ups and errors only
    left = len(servers)
    # Each launcher's answers as last counted, and when that count was first seen.
    seen = {server: (0, time.monotonic()) for server in servers}
    while left > 0:
        for fd, _ in poller.poll(-1 if patience is None else min(_POLL_MAX_MS, math.ceil(patience * 250))):
            if fd != gate.done_fd:
                return False, []
            left -= len(os.read(gate.done_fd, left))
        if patience is None or left == 0:
            continue
        now = time.monotonic()
        overdue = []
        for server in servers:
            count = server.answered()
            if count != seen[server][0]:
                seen[server] = (count, now)
            elif count < server.busy and now - seen[server][1] >= patience:
                overdue.append(server)
        if overdue:
            return False, overdue
    return True, []
