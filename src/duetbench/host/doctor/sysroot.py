"""Reading /proc and /sys under a root directory, so that a copy from another machine can stand in.

Every check reads through a ``SysRoot``; it remembers what was read, which is how ``duet doctor
--snapshot DIR`` copies exactly the files the checks need (the test fixtures are made that way).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

#: More than any /proc or /sys file the checks read (/proc/cpuinfo of a few hundred CPUs is about 1 MiB).
MAX_READ = 16 << 20


class SysRoot:
    def __init__(self, root: Path = Path("/")) -> None:
        self.root = Path(root)
        self.read_paths: set[str] = set()
        self.listed_dirs: set[str] = set()

    @property
    def is_live(self) -> bool:
        """True when this is the running machine itself, where syscalls may be asked too."""
        return self.root.resolve() == Path("/")

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def read(self, absolute: str) -> str | None:
        """The file's text without trailing whitespace, or None when missing, unreadable or not a regular file.

        A copy (--root) may hold a FIFO, or a symlink to a device such as /dev/zero (``cp -a`` keeps /sys's
        links): opened without blocking, read only if regular, and never beyond ``MAX_READ`` bytes, so a
        damaged copy cannot hang the doctor or fill its memory."""
        self.read_paths.add(absolute)
        try:
            fd = os.open(self.path(absolute), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            chunks: list[bytes] = []
            size = 0
            while size < MAX_READ and (chunk := os.read(fd, min(65536, MAX_READ - size))):
                chunks.append(chunk)
                size += len(chunk)
            return b"".join(chunks).decode(errors="replace").rstrip()
        except OSError:
            return None
        finally:
            os.close(fd)

    def read_int(self, absolute: str) -> int | None:
        text = self.read(absolute)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    def exists(self, absolute: str) -> bool:
        self.read_paths.add(absolute)
        return self.path(absolute).exists()

    def listdir(self, absolute: str) -> list[str]:
        """Entry names, sorted; [] when the directory is missing."""
        self.listed_dirs.add(absolute)
        try:
            return sorted(os.listdir(self.path(absolute)))
        except OSError:
            return []

    def writable(self, absolute: str) -> bool:
        """Whether writing the file could succeed: it exists, has a write bit, and we have access.

        Root passes ``access(W_OK)`` on read-only sysctl files too, so the mode bits are checked as well."""
        path = self.path(absolute)
        try:
            mode = path.stat().st_mode
        except OSError:
            return False
        return stat.S_ISREG(mode) and bool(mode & 0o222) and os.access(path, os.W_OK)


def parse_cpu_list(text: str | None) -> list[int]:
    """'0-3,8,10-11' → [0, 1, 2, 3, 8, 10, 11]; '' or None → []."""
    cpus: list[int] = []
    for part in (text or "").strip().split(","):
        part = part.strip()
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            cpus.extend(range(int(lo), int(hi or lo) + 1))
        except ValueError:
            continue
    return sorted(set(cpus))


def format_cpu_list(cpus: list[int]) -> str:
    """[0, 1, 2, 5] → '0-2,5' (the kernel's own notation)."""
    out: list[str] = []
    ordered = sorted(set(cpus))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


def online_cpus(root: SysRoot) -> list[int]:
    cpus = parse_cpu_list(root.read("/sys/devices/system/cpu/online"))
    if cpus:
        return cpus
    return sorted(int(n[3:]) for n in root.listdir("/sys/devices/system/cpu")
                  if n[3:].isdigit() and n.startswith("cpu"))


def measured_cpus(root: SysRoot) -> list[int]:
    """The CPUs a duet would measure on: the two highest-numbered online CPUs, as
    ``plan.schedule.choose_cpus`` picks them (CPU 0, where housekeeping lands, is left out when possible)."""
    return online_cpus(root)[-2:]


def kernel_cmdline_params(root: SysRoot) -> dict[str, str]:
    """Kernel boot parameters (before any ``--`` that starts init's own arguments)."""
    text = root.read("/proc/cmdline") or ""
    params: dict[str, str] = {}
    for token in text.split():
        if token == "--":
            break
        key, _, value = token.partition("=")
        params[key] = value
    return params
