"""A stand-in for an infrequent, long-running daemon: burns CPU for a while, sleeps, repeats.

Started detached (reparented away from the test process, as a real daemon is), it names itself with
prctl(PR_SET_NAME) so that /proc shows its own comm, pins itself to one CPU, writes its pid, and ends
on its own after ``lifetime`` seconds so that a crashed test never leaves it behind.
With ``fifo`` it runs SCHED_FIFO (priority 2), as some kernel threads do: a burst then preempts
everything else on its CPU at once; the pid file says whether that was granted ("<pid> fifo").
"""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

PR_SET_NAME = 15


def main(name: str, cpu: int, burn_ms: float, period_ms: float, lifetime_s: float, pidfile: str, fifo: bool) -> None:
    ctypes.CDLL(None).prctl(PR_SET_NAME, name.encode(), 0, 0, 0)
    os.sched_setaffinity(0, {cpu})
    granted = ""
    if fifo:
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(2))
            granted = " fifo"
        except PermissionError:
            pass
    Path(pidfile + ".tmp").write_text(f"{os.getpid()}{granted}")
    os.rename(pidfile + ".tmp", pidfile)
    end = time.monotonic() + lifetime_s
    while time.monotonic() < end:
        # CPU time, not wall time: the burst is as long as a real daemon's work even when preempted
        start = time.thread_time()
        while time.thread_time() - start < burn_ms / 1000:
            pass
        time.sleep(period_ms / 1000)


def start_detached(name: str, cpu: int, burn_ms: float, period_ms: float, pidfile: Path,
                   lifetime_s: float = 120.0, fifo: bool = False) -> tuple[int, bool]:
    """Start the daemon through a shell that exits at once, so it is not in the caller's process tree."""
    args = " ".join(str(a) for a in (sys.executable, __file__, name, cpu, burn_ms, period_ms, lifetime_s, pidfile,
                                     int(fifo)))
    subprocess.run(["/bin/sh", "-c", f"{args} </dev/null >/dev/null 2>&1 &"], check=True)
    deadline = time.monotonic() + 10
    while not pidfile.exists():
        if time.monotonic() > deadline:
            raise RuntimeError("the noisy daemon did not start")
        time.sleep(0.01)
    pid, *granted = pidfile.read_text().split()
    return int(pid), bool(granted)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5]), sys.argv[6], sys.argv[7] == "1")
