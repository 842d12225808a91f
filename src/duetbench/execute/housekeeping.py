"""What a killed duet left on this machine, cleared by the next ``duet`` command of any kind.

A `kill -9` of the orchestrator skips its clean-up. The launchers notice (PR_SET_PDEATHSIG) and end
the benchmarks; what is left is cleared here: barrier pages in /dev/shm whose maker is gone, the
containers a dead orchestrator started (a killed `podman run` client leaves its container running), its
scratch directories (execute/scratch.py), and side cgroups of dead orchestrators (once the processes in
them have exited). A launcher its command had stopped (`kill -STOP $PPID`) when the orchestrator died
holds that parent-death signal pending for good: it is continued, and then ends as the others did. The
records it left ``running`` are marked when a store is opened (store/orchestrators.py).
"""
from __future__ import annotations

import os
import signal
import time

from duetbench.execute.barrier import sweep_stale_pages
from duetbench.execute.container import sweep_stale_containers
from duetbench.execute.scratch import sweep_stale_scratch
from duetbench.host.cgroup import stale_cgroups, sweep_stale_cgroups

#: How long to let a dead orchestrator's benchmarks finish exiting before their cgroups are removed.
SETTLE_S = 1.0


def clear_leftovers() -> None:
    found = bool(sweep_stale_pages()) | bool(sweep_stale_containers()) | bool(sweep_stale_scratch())
    stale = stale_cgroups()  # the common case: one look through the cgroup tree (~1 ms), not four
    if found or stale:
        # Only where a killed duet left something: a look at every process, 0.45 ms for 70 of them here.
        continue_orphaned_launchers()
    if not stale:
        return
    deadline = time.monotonic() + SETTLE_S
    # A cgroup can only go once empty; right after a kill its processes are still being stopped.
    sweep_stale_cgroups()
    while stale_cgroups() and time.monotonic() < deadline:
        time.sleep(0.05)
        sweep_stale_cgroups()
    # Still there: a process of the dead duet outlived its launcher (a daemon, say). It measures
    # nothing any more and would disturb every later measurement: end it (cgroup v2 only).
    for group in stale_cgroups():
        kill = group / "cgroup.kill"
        try:
            if kill.exists():
                kill.write_text("1")
        except OSError:
            pass
    if stale_cgroups():
        time.sleep(0.1)
        sweep_stale_cgroups()


def continue_orphaned_launchers(proc: str = "/proc") -> list[int]:
    """SIGCONT to every launcher whose orchestrator is gone (its parent is no longer the pid it was given
    with --parent, native/launcher.c `follow_orchestrator`); the pids continued. A launcher of a live
    duet is its orchestrator's child and is left alone. One that runs on acts on the SIGTERM its
    orchestrator's death sent it (it ends its command, answers and exits); one stopped by its command
    (`kill -STOP $PPID`) keeps that signal pending and would stay stopped for good without this."""
    continued: list[int] = []
    try:
        entries = [e.name for e in os.scandir(proc) if e.name.isdigit()]
    except OSError:
        return continued
    for name in entries:
        try:
            with open(f"{proc}/{name}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if os.path.basename(argv[0]) != b"duet-launch" or b"--parent" not in argv:
                continue
            given = int(argv[argv.index(b"--parent") + 1])
            with open(f"{proc}/{name}/stat", "rb") as f:
                parent = int(f.read().rsplit(b")", 1)[1].split()[1])  # after the name, which may hold ")"
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not one of ours
        if parent != given:
            try:
                os.kill(int(name), signal.SIGCONT)
                continued.append(int(name))
            except OSError:
                pass
    return continued
