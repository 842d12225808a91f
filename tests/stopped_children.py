"""Shared by the tests whose commands stop their launcher (`kill -STOP $PPID`): the launchers a runner of this
process left stopped. Such a launcher acts on no signal but SIGKILL, its PR_SET_PDEATHSIG included, and would
outlive the test run."""
from __future__ import annotations

import os
from pathlib import Path


def stopped_children() -> list[int]:
    """The stopped children of this process's threads (a runner run on a thread starts its launchers there)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children = (task / "children").read_text().split()
        except OSError:  # the thread ended meanwhile
            continue
        for pid in children:
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T":
                    found.append(int(pid))
            except OSError:
                pass
    return found


def kill_stopped_children() -> None:
    for pid in stopped_children():
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
