"""Whole-tree CPU time from a cgroup v2 ``cpu.stat``, where the machine offers one.

wait4 with a subreaper already counts daemonized grandchildren; the cgroup is a second, independent
source (it also sees processes that escape the process group) and gives ``cgroup.kill`` for clean-up.
Layouts differ between machines (pure v2 at /sys/fs/cgroup, or hybrid with v2 at
/sys/fs/cgroup/unified — docs/notes/machine_probe.md §2), so detect, don't assume. The v1 *memory*
hierarchy belongs to the sandbox and is never written to; only our own ``duetbench-<pid>-…`` directories
that podman left there are removed once their orchestrator is dead (``sweep_stale_cgroups``).
"""
from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import msgspec

_CANDIDATE_ROOTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
#: Our cgroups (and podman's for our containers) carry the orchestrator's pid: duetbench-<pid>-…
_OURS = re.compile(r"^duetbench-(\d+)-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale_cgroups(roots: Iterable[Path] | None = None) -> int:
    """Remove ``duetbench-<pid>-…`` cgroups whose orchestrator is gone (killed with SIGKILL, so its own
    clean-up never ran); returns how many directories went. Only empty cgroups can be removed (rmdir
    refuses the others), so a process still running in one keeps it. Default roots: every hierarchy
    under /sys/fs/cgroup (v2, and the v1 controllers where podman also makes them).

    Limit: "dead" means no such pid in this process's pid namespace. An orchestrator in another pid
    namespace that shares this cgroup tree (a container with the host's cgroupfs mounted writable)
    looks dead from here, and its cgroup, empty between two invocations, would go."""
    removed = 0
    for top in stale_cgroups(roots):
        # Children first: podman leaves a conmon cgroup inside ours.
        for dirpath, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count(os.sep)):
            try:
                os.rmdir(dirpath)
                removed += 1
            except OSError:
                pass
    return removed


def stale_cgroups(roots: Iterable[Path] | None = None) -> list[Path]:
    """Our ``duetbench-<pid>-…`` cgroups whose orchestrator is gone (see `sweep_stale_cgroups`), in the
    roots this user may remove them from."""
    if roots is None:
        base = Path("/sys/fs/cgroup")
        roots = [base, *_subdirs(base)]
        parent = find_cgroup2_root()  # a delegated cgroup of ours, where a killed duet left its sides
        if parent is not None and parent not in roots:
            roots.append(parent)
    me = os.getpid()
    found = []
    for root in roots:
        # Only where we may remove them: another user's (root's, for an ordinary user) would otherwise
        # be waited for by every command (execute/housekeeping.py) and never go.
        if not os.access(root, os.W_OK):
            continue
        for top in _subdirs(root, _OURS):
            match = _OURS.match(top.name)
            if match is not None and int(match.group(1)) != me and not _alive(int(match.group(1))):
                found.append(top)
    return found


def _subdirs(path: Path, named: re.Pattern[str] | None = None) -> list[Path]:
    """The directories in `path` (those whose name matches `named`), symbolic links left out. Every
    ``duet`` command looks through the cgroup tree once (execute/housekeeping.py): the names are
    matched before anything is looked up, and the directory entries' types need no stat."""
    try:
        with os.scandir(path) as entries:
            return [Path(e.path) for e in entries
                    if (named is None or named.match(e.name)) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


@cache
def _sweep_once() -> int:
    return sweep_stale_cgroups()


def find_cgroup2_root() -> Path | None:
    """Where we may make the sides' cgroups: the cgroup2 hierarchy's mount point if we may create children
    there (root), else the cgroup this process runs in if it was delegated to us — an ordinary user's
    ``systemd-run --user --scope -p Delegate=yes duet …`` — since the kernel lets a process move its child
    only between cgroups below one whose cgroup.procs it may write. Without controllers enabled there,
    its children still have cpu.stat's usage and cpu.pressure, which is all the sides need."""
    for root in _CANDIDATE_ROOTS:
        if (root / "cgroup.procs").exists() and (root / "cgroup.subtree_control").exists():
            if os.access(root, os.W_OK):
                return root
            own = own_cgroup(root)
            if own is not None and os.access(own, os.W_OK) and os.access(own / "cgroup.procs", os.W_OK):
                return own
    return None


def own_cgroup(mount: Path, proc_cgroup: str = "/proc/self/cgroup") -> Path | None:
    """The cgroup2 directory this process belongs to, under `mount`; None if not known or not there."""
    try:
        with open(proc_cgroup) as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        if line.startswith("0::/"):
            path = mount / line[4:]
            return path if path.is_dir() else None
    return None


class SideCgroup(msgspec.Struct):
    """A cgroup for one side of a comparison; cpu.stat is cumulative, so we keep deltas."""

    path: Path
    #: The directory's inode when `ensure` last saw it (-1: not yet). A cgroup made again has another one,
    #: and its counters start anew (execute/invocation.py reads them afresh then).
    inode: int = -1

    @classmethod
    def create(cls, name: str) -> SideCgroup | None:
        root = find_cgroup2_root()
        if root is None:
            return None
        _sweep_once()
        path = root / name
        try:
            path.mkdir(exist_ok=True)
        except OSError:
            return None
        group = cls(path)
        if group.usage_usec() is None:
            group.remove()
            return None
        return group

    def ensure(self) -> SideCgroup | None:
        """This cgroup, made again if something removed it since (a clean-up tool, another duet's sweep
        from another pid namespace); None if it cannot be, and the invocation then runs without one.
        cpu.stat is read as a delta per invocation, so a new cgroup's counter starting at 0 is fine.
        One stat(), which also gives the inode: called for each invocation, between pairs."""
        try:
            found = os.stat(self.path)
        except OSError:
            found = None
        if found is None or not stat.S_ISDIR(found.st_mode):
            try:
                self.path.mkdir(exist_ok=True)
                found = os.stat(self.path)
            except OSError:
                return None
        self.inode = found.st_ino
        return self

    def usage_usec(self) -> int | None:
        try:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value)
        except (OSError, ValueError):
            return None
        return None

    def wait_usec(self) -> int | None:
        """How long the cgroup's tasks were runnable but waiting for a CPU so far (µs): the "some" total
        of its cpu.pressure (pressure stall information); None where the kernel has none (no PSI, or
        cgroup v1 only). Sleeping and waiting for I/O are not counted."""
        try:
            with open(self.path / "cpu.pressure") as f:
                first = f.readline()
        except OSError:
            return None
        kind, _, fields = first.partition(" ")
        if kind != "some":
            return None
        for field in fields.split():
            key, _, value = field.partition("=")
            if key == "total" and value.isdigit():
                return int(value)
        return None

    def remove(self) -> None:
        try:
            kill = self.path / "cgroup.kill"
            if kill.exists():
                kill.write_text("1")
            self.path.rmdir()
        except OSError:
            pass
