"""A /dev/shm that is full or read-only (a container's 64 MB one, filled by something else): the duet's
barrier page cannot be made. That is one clear line, exit 2, and nothing left behind, where it was a
SIGBUS (the page was a sparse file, mapped fine and then written) and a reporter's traceback."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

UNSHARE = shutil.which("unshare")


def _in_own_mounts(script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`script` (sh) in a private mount namespace, where tmpfs mounts touch nobody else."""
    if UNSHARE is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to mount a small tmpfs privately")
    probe = subprocess.run([UNSHARE, "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m is not permitted here: {probe.stderr.strip()}")
    return subprocess.run([UNSHARE, "-m", "sh", "-c", script], capture_output=True, text=True, env=env, timeout=120)


FILL = "mount -t tmpfs -o size=8k tmpfs {d} && dd if=/dev/zero of={d}/fill bs=4k count=2 2>/dev/null"


def test_a_full_directory_is_a_clear_error_not_a_sigbus(tmp_path: Path) -> None:
    shm = tmp_path / "shm"
    shm.mkdir()
    code = ("from duetbench.execute.barrier import BarrierPage\nfrom duetbench.errors import DuetError\n"
            "try:\n    BarrierPage(directory=%r, pages=3)\nexcept DuetError as e:\n    print('ERR', e)\n" % str(shm))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    result = _in_own_mounts(f"{FILL.format(d=shm)} && {sys.executable} -c \"$CODE\"; echo rc=$?; ls {shm}",
                            env={**env, "CODE": code})
    assert "rc=0" in result.stdout, (result.stdout, result.stderr)
    assert f"ERR cannot make the duet's barrier page in {shm}: No space left on device" in result.stdout, result.stdout
    assert result.stdout.strip().endswith("fill"), result.stdout  # nothing left behind but the filler


def test_compare_with_dev_shm_full_or_read_only(duet_env: dict[str, str], tmp_path: Path) -> None:
    duet = f"{sys.executable} -m duetbench compare true true --runs 3 --method duet --no-progress --db {tmp_path}/r.db"
    result = _in_own_mounts(f"{FILL.format(d='/dev/shm')} && {duet}; echo rc=$?; "
                            f"mount -o remount,ro /dev/shm && {duet}; echo rc=$?", env=duet_env)
    assert result.stdout.count("rc=2") == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert "Traceback" not in result.stderr and len(lines) == 2, result.stderr
    assert "No space left on device" in lines[0] and "Read-only file system" in lines[1], lines
    assert all(line.startswith("error: cannot make the duet's barrier page in /dev/shm") and "df /dev/shm" in line
               for line in lines), lines
