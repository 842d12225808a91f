"""Whole-tree CPU time from a cgroup v2 ``cpu.stat``, where the machine offers one.

wait4 with a subreaper already counts daemonized grandchildren; the cgroup is a second, independent
source (it also sees processes that escape the process group) and gives ``cgroup.kill`` for clean-up.
Layouts differ between machines (pure v2 at /sys/fs/cgroup, or hybrid with v2 at
/sys/fs/cgroup/unified — notes/machine_probe.md §2), so detect, don't assume. The v1 *memory*
hierarchy belongs to the sandbox and is never touched.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_CANDIDATE_ROOTS = (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def find_cgroup2_root() -> Path | None:
    """The mount point of the cgroup2 hierarchy if it has cpu.stat and we may create children."""
    for root in _CANDIDATE_ROOTS:
        if (root / "cgroup.procs").exists() and (root / "cgroup.subtree_control").exists():
            if os.access(root, os.W_OK):
                return root
    return None


@dataclass
class SideCgroup:
    """A cgroup for one side of a comparison; cpu.stat is cumulative, so we keep deltas."""

    path: Path

    @classmethod
    def create(cls, name: str) -> "SideCgroup | None":
        root = find_cgroup2_root()
        if root is None:
            return None
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

    def usage_usec(self) -> int | None:
        try:
            for line in (self.path / "cpu.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value)
        except (OSError, ValueError):
            return None
        return None

    def remove(self) -> None:
        try:
            kill = self.path / "cgroup.kill"
            if kill.exists():
                kill.write_text("1")
            self.path.rmdir()
        except OSError:
            pass
