"""Who owns a measurement: the orchestrator's pid, its start time and the machine it runs on.

A `kill -9` of the orchestrator runs none of its clean-up. Everything it leaves behind (a barrier page
in /dev/shm, a comparison or campaign stored as ``running``) carries this identity, so that any later
``duet`` command can tell that its owner is gone — a pid alone is not enough, pids are reused, so the
process's start time (in clock ticks since boot, /proc/PID/stat field 22) must match too. Only what was
made on this machine, since its last boot, is ever judged: a record written by another host (a shared
PostgreSQL database, a Slurm node) is left as it is.
"""
from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import msgspec


def process_start(pid: int) -> int | None:
    """The process's start time in clock ticks after boot; None when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


@cache
def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


class Owner(msgspec.Struct, frozen=True):
    pid: int
    start: int
    host: str
    boot: str

    @classmethod
    def me(cls) -> Owner:
        pid = os.getpid()
        # os.uname().nodename is what socket.gethostname() returns on Linux (both are the UTS nodename),
        # without importing socket (~5 ms of `duet compare`'s start on a 2-vCPU VM).
        return cls(pid, process_start(pid) or 0, os.uname().nodename, boot_id())

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "start": self.start, "host": self.host, "boot": self.boot}

    @classmethod
    def from_json(cls, data: Any) -> Owner | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(int(data["pid"]), int(data["start"]), str(data["host"]), str(data["boot"]))
        except (KeyError, TypeError, ValueError):
            return None

    def judged_here(self) -> bool:
        """Whether this machine can tell if the owner lives: same host name and the same boot."""
        return bool(self.boot) and self.boot == boot_id() and self.host == os.uname().nodename

    def dead(self) -> bool:
        """True only when the owner is known to be gone: made here and no process with its pid and start."""
        return self.judged_here() and process_start(self.pid) != self.start


def page_tag(pid: int | None = None) -> str:
    """``<pid>-<start>``: the part of a /dev/shm name that says which process made it."""
    pid = os.getpid() if pid is None else pid
    return f"{pid}-{process_start(pid) or 0}"


def tag_is_dead(pid: int, start: int) -> bool:
    """Whether a ``<pid>-<start>`` tag names a process that no longer runs (on this machine, whose
    /dev/shm is its own)."""
    return process_start(pid) != start
