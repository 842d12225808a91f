"""What a killed duet left on this machine, cleared by the next ``duet`` command of any kind.

A `kill -9` of the orchestrator skips its clean-up. The launchers notice (PR_SET_PDEATHSIG) and end
the benchmarks; what is left is cleared here: barrier pages in /dev/shm whose maker is gone, the
containers a dead orchestrator started (a killed `podman run` client leaves its container running), its
scratch directories (execute/scratch.py), and side cgroups of dead orchestrators (once the processes in
them have exited). The records it left
``running`` are marked when a store is opened (store/orchestrators.py).
"""
from __future__ import annotations

import time

from duetbench.execute.barrier import sweep_stale_pages
from duetbench.execute.container import sweep_stale_containers
from duetbench.execute.scratch import sweep_stale_scratch
from duetbench.host.cgroup import stale_cgroups, sweep_stale_cgroups

#: How long to let a dead orchestrator's benchmarks finish exiting before their cgroups are removed.
SETTLE_S = 1.0


def clear_leftovers() -> None:
    sweep_stale_pages()
    sweep_stale_containers()
    sweep_stale_scratch()
    if not stale_cgroups():  # the common case: one look through the cgroup tree (~1 ms), not four
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
