"""One measurement at a time per machine.

Two campaigns (or a campaign and a `duet compare`) measuring at once would each be the other's
noise, and each side of a duet expects a CPU of its own. A machine-wide advisory lock (flock) is held
for the whole measurement; the kernel releases it when the holder dies, so a killed run never leaves
a stale lock behind. The holder writes who it is into the file, so the second one can say whom it
is waiting for.

By default the second measurement fails at once (a person at a terminal would rather know). CI
runners with parallel jobs on one machine want to queue instead: `acquire(wait=SECONDS)` or the
environment variable DUETBENCH_LOCK_WAIT=SECONDS (``inf`` for no limit) makes it wait, polling, so it
needs no change to any command line. docs/lock.md.
"""
from __future__ import annotations

import fcntl
import json
import math
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from duetbench.errors import DuetError


def default_lock_path() -> Path:
    override = os.environ.get("DUETBENCH_LOCK")
    if override:
        return Path(override)
    run_lock = Path("/run/lock")
    if run_lock.is_dir() and os.access(run_lock, os.W_OK):
        return run_lock / "duetbench.lock"
    return Path(os.environ.get("TMPDIR", "/tmp")) / "duetbench.lock"


WAIT_ENV = "DUETBENCH_LOCK_WAIT"
# Polling, not a blocking flock with an alarm: no signal handlers to disturb, and the holder's
# description can be re-read if the holder changes while we wait.
POLL_S = 0.2


def wait_from_env(environ: dict[str, str] | None = None) -> float:
    """Seconds to wait for the lock according to DUETBENCH_LOCK_WAIT (0 when unset: fail at once)."""
    text = (os.environ if environ is None else environ).get(WAIT_ENV, "").strip()
    if not text:
        return 0.0
    try:
        seconds = math.inf if text.lower() in ("inf", "forever") else float(text)
    except ValueError:
        seconds = -1.0
    if not seconds >= 0:  # also rejects nan
        raise DuetError(f"{WAIT_ENV}={text!r} is not a number of seconds",
                        hint=f"e.g. {WAIT_ENV}=600 to wait up to 10 minutes, {WAIT_ENV}=inf to wait without limit, "
                             f"or unset it to fail at once")
    return seconds


class MeasurementLock:
    def __init__(self, what: str, path: Path | None = None) -> None:
        self.what = what
        self.path = path or default_lock_path()
        self._fd: int | None = None

    def acquire(self, wait: float | None = None, log: TextIO | None = None) -> None:
        """Take the lock. `wait`: seconds to wait for another holder (``math.inf``: no limit; None: the
        DUETBENCH_LOCK_WAIT environment variable, 0 when it is unset). Whom we wait for is written to
        `log` (default stderr) once."""
        wait = wait_from_env() if wait is None else wait
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise DuetError(f"cannot open the machine lock {self.path}: {exc.strerror}",
                            hint="set DUETBENCH_LOCK to a writable path") from None
        deadline = time.monotonic() + wait
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = _describe_holder(fd)
                if time.monotonic() >= deadline:
                    os.close(fd)
                    waited = f" (waited {wait:g} s)" if wait > 0 else ""
                    raise DuetError(f"another measurement is running on this machine{waited}: {holder}",
                                    hint=f"wait for it to finish (or stop it), or set {WAIT_ENV}=SECONDS to queue "
                                         "behind it; two measurements at once would disturb each other") from None
                if not told:
                    limit = "" if math.isinf(wait) else f" (up to {wait:g} s)"
                    print(f"waiting for the machine lock {self.path}{limit}: held by {holder}",
                          file=log or sys.stderr, flush=True)
                    told = True
                time.sleep(min(POLL_S, max(0.0, deadline - time.monotonic())))
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "what": self.what, "since": time.time()}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> MeasurementLock:
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
