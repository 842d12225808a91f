"""The shared page of the duet barrier protocol (layout: native/duet_barrier.h, version 1).

The orchestrator creates the page under /dev/shm (where that is full or read-only: in the temporary
directory, whose page cache the sides share as well), resets it before each pair and removes it at the
end; the native launchers (and, later, harness hooks) map it and spin on it. The page's name carries
its maker's pid and start time (``duetbench-barrier-<pid>-<start>-…``): a page whose maker was killed
before it could remove it is removed by the next ``duet`` command (`sweep_stale_pages`).
"""
from __future__ import annotations

import mmap
import os
import re
import struct
import tempfile
from pathlib import Path

from duetbench.errors import DuetError
from duetbench.execute.owner import page_tag, tag_is_dead

MAGIC = 0x54455544
VERSION = 1
SIZE = 4096
ABORT_TIMEOUT = 1
ABORT_FAILED = 2
ABORT_USER = 3
ABORT_EXITED = 4  # a party's process has exited (set by duet-launch and by the orchestrator)
_OFF_ABORT = 12
_OFF_ARRIVED = 64
_OFF_GENERATION = 128
PREFIX = "duetbench-barrier-"
_OWNED = re.compile(rf"^{PREFIX}(\d+)-(\d+)-")


def _unusable(tried: list[tuple[str, OSError]]) -> DuetError:
    said = " nor in ".join(f"{where} ({exc.strerror or exc})" for where, exc in tried)
    places = " or ".join(where for where, _ in tried)
    return DuetError(f"cannot make the duet's barrier page in {said}",
                     hint=f"free space in {places} (df {tried[0][0]}) or make it writable")


def _directories() -> list[str]:
    """Where a barrier page may go: /dev/shm, else the temporary directory (a page of a file on any file
    system is shared memory too once mapped; a container's side only sees /dev/shm, so a campaign with
    containers names that directory itself)."""
    shm = ["/dev/shm"] if os.path.isdir("/dev/shm") else []
    return [*shm, *(d for d in [tempfile.gettempdir()] if d not in shm)]


class BarrierPage:
    """A barrier file plus our own mapping of it.

    With ``pages`` > 1 the file holds that many barrier pages one after another, each a whole barrier
    (slot k at offset k * SIZE): pairs queued to the launchers meet each at a page of its own, since a
    page ends its pair aborted (the launcher sets ABORT_EXITED once its command is gone) and nobody
    resets it between queued pairs. Slot 0 is the one a file of one page has."""

    def __init__(self, parties: int = 2, directory: str | None = None, pages: int = 1) -> None:
        tried: list[tuple[str, OSError]] = []
        for where in [directory] if directory is not None else _directories():
            try:
                self.path, self._map = self._make(where, pages)
                break
            except OSError as exc:
                tried.append((where, exc))
        else:
            raise _unusable(tried)
        self.pages = pages
        self.parties = parties
        self.reset(*range(pages))

    @staticmethod
    def _make(directory: str, pages: int) -> tuple[Path, mmap.mmap]:
        fd, name = tempfile.mkstemp(prefix=f"{PREFIX}{page_tag()}-", dir=directory)
        try:
            # Allocated, not only sized: on a full tmpfs a sparse file maps fine and the first write to
            # it kills the process with SIGBUS; fallocate says ENOSPC instead.
            os.posix_fallocate(fd, 0, SIZE * pages)
            return Path(name), mmap.mmap(fd, SIZE * pages, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except OSError:
            Path(name).unlink(missing_ok=True)
            raise
        finally:
            os.close(fd)

    def reset(self, *slots: int) -> None:
        """Zero the counters and clear abort of these pages (none named: the first); only call while no
        party waits at them."""
        for slot in slots or (0,):
            base = slot * SIZE
            self._map[base:base + SIZE] = bytes(SIZE)
            struct.pack_into("<IIII", self._map, base, MAGIC, VERSION, self.parties, 0)

    def abort(self, reason: int = ABORT_FAILED, slot: int = 0) -> None:
        struct.pack_into("<I", self._map, slot * SIZE + _OFF_ABORT, reason)

    @property
    def aborted(self) -> int:
        return struct.unpack_from("<I", self._map, _OFF_ABORT)[0]

    @property
    def generation(self) -> int:
        return struct.unpack_from("<Q", self._map, _OFF_GENERATION)[0]

    @property
    def waiting(self) -> int:
        """Parties arrived in the current generation. After a run: a wait that was never released (its
        party arrived, then gave up on an abort or a timeout), which the generation cannot show."""
        return struct.unpack_from("<I", self._map, _OFF_ARRIVED)[0]

    def close(self) -> None:
        self._map.close()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> BarrierPage:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sweep_stale_pages(directory: str | None = None) -> list[Path]:
    """Remove the barrier pages whose maker no longer runs, from `directory` (None: every directory a
    page may go to); the paths removed. Pages of live makers, and pages without an owner in their name
    (older versions), are left alone."""
    removed: list[Path] = []
    for where in [directory] if directory is not None else _directories():
        removed += _sweep(where)
    return removed


def _sweep(directory: str) -> list[Path]:
    removed: list[Path] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = _OWNED.match(name)
        if match is None or not tag_is_dead(int(match.group(1)), int(match.group(2))):
            continue
        path = Path(directory, name)
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            pass  # another sweeper was quicker, or the page is not ours to remove
    return removed
