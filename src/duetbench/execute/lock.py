"""One measurement at a time per machine.

Two campaigns (or a campaign and a `duet compare`) measuring at once would each be the other's
noise, and each side of a duet expects a CPU of its own. A machine-wide advisory lock (flock) is held
for the whole measurement; the kernel releases it when the holder dies, so a killed run never leaves
a stale lock behind. The holder writes who it is into the file, so the second one can say whom it
is waiting for.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

from duetbench.errors import DuetError


def default_lock_path() -> Path:
    override = os.environ.get("DUETBENCH_LOCK")
    if override:
        return Path(override)
    run_lock = Path("/run/lock")
    if run_lock.is_dir() and os.access(run_lock, os.W_OK):
        return run_lock / "duetbench.lock"
    return Path(os.environ.get("TMPDIR", "/tmp")) / "duetbench.lock"


class MeasurementLock:
    def __init__(self, what: str, path: Path | None = None) -> None:
        self.what = what
        self.path = path or default_lock_path()
        self._fd: int | None = None

    def acquire(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise DuetError(f"cannot open the machine lock {self.path}: {exc.strerror}",
                            hint="set DUETBENCH_LOCK to a writable path") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe_holder(fd)
            os.close(fd)
            raise DuetError(f"another measurement is running on this machine: {holder}",
                            hint="wait for it to finish (or stop it); two measurements at once would disturb "
                                 "each other") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "what": self.what, "since": time.time()}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "MeasurementLock":
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _describe_holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        return f"{info['what']} (pid {info['pid']}, since {since})"
    except (ValueError, KeyError, TypeError, OSError):
        return "a process holding the lock file (it has not said who it is yet)"
