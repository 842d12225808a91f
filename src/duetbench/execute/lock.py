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
import shlex
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
        self._writable = False

    def acquire(self, wait: float | None = None, log: TextIO | None = None) -> None:
        """Take the lock. `wait`: seconds to wait for another holder (``math.inf``: no limit; None: the
        DUETBENCH_LOCK_WAIT environment variable, 0 when it is unset). Whom we wait for is written to
        `log` (default stderr) once."""
        wait = wait_from_env() if wait is None else wait
        fd, self._writable = _open_lock_file(self.path)
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
        if self._writable:
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps({"pid": os.getpid(), "what": self.what, "since": time.time()}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            if self._writable:
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> MeasurementLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _open_lock_file(path: Path) -> tuple[int, bool]:
    """The lock file opened for flock, and whether we may write who we are into it. Every user of the
    machine must be able to take the same lock: a file another user made (root's ``sudo duet run``, with
    its umask's 0644) is opened read-only, which flock needs no more than; one we make is made writable
    for all, so the next user can say who it is. An existing file is opened without O_CREAT: with
    fs.protected_regular (systemd's default) an O_CREAT open of another user's file in a sticky
    directory such as /run/lock is refused, even to root."""
    for attempt in range(3):
        try:
            return os.open(path, os.O_RDWR | os.O_CLOEXEC), True
        except FileNotFoundError:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
            except FileExistsError as exc:
                if attempt < 2:
                    continue  # another duet made it meanwhile: open theirs
                raise _unusable(path, exc) from None  # there, yet not to be opened: a dangling link
            except OSError as exc:
                raise _unusable(path, exc) from None
            try:
                os.fchmod(fd, 0o666)  # past the umask
            except OSError:
                pass
            return fd, True
        except PermissionError:
            try:
                return os.open(path, os.O_RDONLY | os.O_CLOEXEC), False
            except OSError as exc:
                raise _unusable(path, exc) from None
        except OSError as exc:
            raise _unusable(path, exc) from None
    raise AssertionError("unreachable")


def _unusable(path: Path, exc: OSError) -> DuetError:
    if path.is_symlink() and not path.exists():
        return DuetError(f"cannot open the machine lock {path}: it is a link to {os.readlink(path)}, which does not "
                         "exist", hint="remove the link, or set DUETBENCH_LOCK to a writable path")
    if isinstance(exc, PermissionError) and path.exists():
        try:
            import pwd

            owner = pwd.getpwuid(path.stat().st_uid).pw_name
        except (OSError, KeyError):
            owner = "its owner"
        return DuetError(f"cannot open the machine lock {path}: {exc.strerror} (it belongs to {owner})",
                         hint=f"ask {owner} to `chmod a+r {path}` so that every user's measurements exclude each "
                              "other, or set DUETBENCH_LOCK to a file all of them can open")
    return DuetError(f"cannot open the machine lock {path}: {exc.strerror}",
                     hint="set DUETBENCH_LOCK to a writable path")


def _describe_holder(fd: int) -> str:
    # The kernel knows who holds it: a holder that could not write into the file (another user's) left
    # it empty, or with what a killed writable holder wrote before it.
    pid = _flock_holder(fd)
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(info["since"])))
        if pid is None or int(info["pid"]) == pid:
            return f"{info['what']} (pid {info['pid']}, since {since})"
    except (ValueError, KeyError, TypeError, OSError):
        pass
    if pid is not None:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
        except OSError:
            argv = []
        return f"{_command_of(argv) or 'a process'} (pid {pid})"
    return "a process holding the lock file (it has not said who it is yet)"


def _command_of(argv: list[str]) -> str:
    """A duet command line as its user typed it (``duet compare …``, not the interpreter's argv)."""
    for i, arg in enumerate(argv):
        if os.path.basename(arg) == "duet" or (arg == "duetbench" and i > 0 and argv[i - 1] == "-m"):
            argv = ["duet", *argv[i + 1:]]
            break
    text = shlex.join(argv)
    return text if len(text) <= 200 else text[:199] + "…"


def _flock_holder(fd: int, locks: str = "/proc/locks") -> int | None:
    """The pid /proc/locks names as holding a flock on `fd`'s file, if any (and visible here)."""
    try:
        st = os.fstat(fd)
        with open(locks) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    here = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 4711 00:2b:1234 0 EOF"; waiters' lines start with "->"
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == here and fields[4].isdigit():
            return int(fields[4]) or None
    return None
