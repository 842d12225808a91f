"""Scratch directories of a measurement (launcher stderr files, per-invocation results), and their
clean-up after a `kill -9`.

A scratch directory's name carries its maker's pid and start time, like the barrier pages (execute/owner.py),
and the machine's boot: ``duetbench-<purpose>-<pid>-<start>-<boot>-…``. One left by a killed orchestrator is
removed by the next ``duet`` command (`sweep_stale_scratch`); before, every `kill -9` left its directory in
the temporary directory for good. The boot part keeps a sweep from judging a directory made by another
machine (a temporary directory on a shared file system) or before a reboot: only this boot's are removed.
"""
from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from duetbench.execute.owner import boot_id, page_tag, tag_is_dead

PREFIX = "duetbench-"
#: What a scratch directory is for; the sweep only touches these (``duetbench-barrier-`` pages and the
#: like live elsewhere and have their own sweeps).
PURPOSES = ("run", "measure", "calibrate")
_OWNED = re.compile(rf"^{PREFIX}(?:{'|'.join(PURPOSES)})-(\d+)-(\d+)-([0-9a-f]{{8}})-")


def _boot_tag() -> str:
    # Eight hex digits of the boot id: enough to tell boots and machines apart, short in a path.
    return (boot_id().replace("-", "") or "0" * 8)[:8]


def scratch_directory(purpose: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary directory named after its purpose and its owner, removed when the block ends."""
    if purpose not in PURPOSES:
        raise ValueError(f"unknown scratch purpose {purpose!r}")
    return tempfile.TemporaryDirectory(prefix=f"{PREFIX}{purpose}-{page_tag()}-{_boot_tag()}-")


def _recover(path: Path) -> None:
    """Store the pairs a killed orchestrator's last queued batch measured (execute/journal.py), if it left
    any: never in the way of the command that sweeps, whatever the directory or the store holds."""
    from duetbench.execute.journal import MANIFEST

    if not (path / MANIFEST).is_file():
        return
    from duetbench.execute.journal import recover

    try:
        recover(path)
    except Exception:  # noqa: BLE001 - a store gone or unreadable: the sweep goes on, as it would without
        pass


def sweep_stale_scratch(directory: str | None = None) -> list[Path]:
    """Remove the scratch directories whose maker no longer runs; the paths removed. Those of live makers,
    and directories without an owner in their name (older versions, other programs), are left alone."""
    root = directory if directory is not None else tempfile.gettempdir()
    removed: list[Path] = []
    if not boot_id():  # no way to tell this boot's directories from others'
        return removed
    try:
        names = os.listdir(root)
    except OSError:
        return removed
    here = _boot_tag()
    for name in names:
        match = _OWNED.match(name)
        if match is None or match.group(3) != here or not tag_is_dead(int(match.group(1)), int(match.group(2))):
            continue
        path = Path(root, name)
        try:
            found = path.lstat()
        except OSError:
            continue
        # Only a real directory (never follow a link someone put there under our name), and only this
        # user's: another's (root's `sudo duet`, made 0700) is neither ours to read nor, in a sticky /tmp,
        # to remove, and root must not store pairs into whatever store a user's manifest names. Its
        # owner's next duet command recovers and removes it.
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.geteuid():
            continue
        _recover(path)
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    return removed
