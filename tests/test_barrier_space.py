"""A /dev/shm that is full or read-only (a container's 64 MB one, filled by something else): the duet's
barrier page cannot be made. That is one clear line, exit 2, and nothing left behind, where it was a
SIGBUS (the page was a sparse file, mapped fine and then written) and a reporter's traceback."""
from __future__ import annotations

import os
import sys
from pathlib import Path

from own_mounts import in_own_mounts

FILL = "mount -t tmpfs -o size=8k tmpfs {d} && dd if=/dev/zero of={d}/fill bs=4k count=2 2>/dev/null"


def test_a_full_directory_is_a_clear_error_not_a_sigbus(tmp_path: Path) -> None:
    shm = tmp_path / "shm"
    shm.mkdir()
    code = ("from duetbench.execute.barrier import BarrierPage\nfrom duetbench.errors import DuetError\n"
            "try:\n    BarrierPage(directory=%r, pages=3)\nexcept DuetError as e:\n    print('ERR', e)\n" % str(shm))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    result = in_own_mounts(f"{FILL.format(d=shm)} && {sys.executable} -c \"$CODE\"; echo rc=$?; ls {shm}",
                            env={**env, "CODE": code})
    assert "rc=0" in result.stdout, (result.stdout, result.stderr)
    assert f"ERR cannot make the duet's barrier page in {shm} (No space left on device)" in result.stdout, result.stdout
    assert result.stdout.strip().endswith("fill"), result.stdout  # nothing left behind but the filler


def test_with_every_directory_unusable_the_error_names_each(tmp_path: Path) -> None:
    full, read_only = tmp_path / "full", tmp_path / "ro"
    full.mkdir()
    read_only.mkdir()
    code = ("from duetbench.execute import barrier\nfrom duetbench.errors import DuetError\n"
            f"barrier._directories = lambda: [{str(full)!r}, {str(read_only)!r}]\n"
            "try:\n    barrier.BarrierPage()\nexcept DuetError as e:\n    print('ERR', e)\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"), "CODE": code}
    result = in_own_mounts(f"{FILL.format(d=full)} && mount -t tmpfs -o ro tmpfs {read_only} && "
                            f"{sys.executable} -c \"$CODE\"", env=env)
    assert (f"ERR cannot make the duet's barrier page in {full} (No space left on device) nor in {read_only} "
            f"(Read-only file system) - free space in {full} or {read_only}") in result.stdout.replace("—", "-"), \
        (result.stdout, result.stderr)


def test_compare_with_dev_shm_full_or_read_only_uses_the_temporary_directory(duet_env: dict[str, str],
                                                                            tmp_path: Path) -> None:
    # Every method needs a page (a sequential batch's pages carry its halt): with /dev/shm full or
    # read-only (a container's 64 MB one, filled by something else) a comparison of any method failed.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**duet_env, "TMPDIR": str(scratch)}
    duet = f"{sys.executable} -m duetbench compare 'sleep 0.001' 'sleep 0.001' --no-progress --db {tmp_path}/r.db"
    result = in_own_mounts(f"{FILL.format(d='/dev/shm')} && {duet} --runs 40 --method duet; echo rc=$?; "
                            f"{duet} --runs 40 --method sequential; echo rc=$?; "
                            f"mount -o remount,ro /dev/shm && {duet} --runs 5; echo rc=$?; ls /dev/shm", env=env)
    assert result.stdout.count("rc=0") == 3, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "barrier page" not in result.stderr, result.stderr
    assert result.stdout.strip().endswith("fill"), result.stdout  # /dev/shm as it was
    assert not [p for p in scratch.iterdir() if p.name.startswith("duetbench-barrier-")]  # and removed after
