"""The scratch directory of a killed measurement (launcher stderr files, results) is removed by the next
`duet` command; a live maker's, another boot's, another program's and a link are left alone."""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from duetbench.execute.owner import boot_id, page_tag, process_start
from duetbench.execute.scratch import scratch_directory, sweep_stale_scratch

pytestmark = pytest.mark.skipif(not boot_id(), reason="no /proc/sys/kernel/random/boot_id: nothing is swept")


def _dead_tag() -> str:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert process_start(dead.pid) is None
    return f"{dead.pid}-12345"


def test_sweep_removes_only_a_dead_makers_directory(tmp_path: Path) -> None:
    boot = boot_id().replace("-", "")[:8]
    other_boot = "0" * 8 if boot != "0" * 8 else "1" * 8
    dead = tmp_path / f"duetbench-run-{_dead_tag()}-{boot}-abc"
    (dead / "sub").mkdir(parents=True)
    (dead / "cpu0.stderr").write_text("")
    (dead / "sub" / "A-1-x.json").write_text("{}")
    live = tmp_path / f"duetbench-measure-{page_tag()}-{boot}-def"
    live.mkdir()
    elsewhere = tmp_path / f"duetbench-run-{_dead_tag()}-{other_boot}-ghi"
    elsewhere.mkdir()
    untagged = tmp_path / "duetbench-k2j4h5g6"  # made by a version before the owner was in the name
    untagged.mkdir()
    barrier = tmp_path / f"duetbench-barrier-{_dead_tag()}-{boot}-jkl"  # not a scratch directory
    barrier.mkdir()
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("")
    link = tmp_path / f"duetbench-calibrate-{_dead_tag()}-{boot}-mno"
    link.symlink_to(target)

    assert sweep_stale_scratch(str(tmp_path)) == [dead]
    assert not dead.exists()
    assert live.is_dir() and elsewhere.is_dir() and untagged.is_dir() and barrier.is_dir()
    assert (target / "keep").exists() and link.is_symlink()
    assert sweep_stale_scratch(str(tmp_path)) == []


def test_a_scratch_directory_names_its_owner_and_goes_at_the_end(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with scratch_directory("run") as made:
        name = Path(made).name
        assert name.startswith(f"duetbench-run-{page_tag()}-{boot_id().replace('-', '')[:8]}-")
        assert sweep_stale_scratch(str(tmp_path)) == []  # its maker (this process) lives
    assert not Path(made).exists()
    with pytest.raises(ValueError):
        scratch_directory("elsewhere")


def test_the_next_command_removes_a_killed_compares_scratch(tmp_path: Path) -> None:
    """End to end without the launchers: a process makes its scratch directory and is killed with
    SIGKILL; the next command (`duet show`, any command) removes it."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    code = ("import os, signal\nfrom duetbench.execute.scratch import scratch_directory\n"
            "d = scratch_directory('run')\nopen(os.path.join(d.name, 'cpu0.stderr'), 'w').close()\n"
            "os.kill(os.getpid(), signal.SIGKILL)\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=False)
    left = list(scratch.iterdir())
    assert len(left) == 1 and (left[0] / "cpu0.stderr").exists()
    done = subprocess.run([sys.executable, "-m", "duetbench", "show", "--db", str(tmp_path / "none.db")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr
    assert list(scratch.iterdir()) == []


def test_barrier_pages_of_dead_makers_are_swept_from_the_temporary_directory_too(tmp_path: Path,
                                                                               monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A page goes to the temporary directory where /dev/shm is full or read-only (execute/barrier.py).
    from duetbench.execute.barrier import BarrierPage, sweep_stale_pages

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = tmp_path / f"duetbench-barrier-{_dead_tag()}-abc"
    dead.write_bytes(bytes(4096))
    with BarrierPage(directory=str(tmp_path)) as live:
        removed = sweep_stale_pages()
        assert dead in removed and not dead.exists()
        assert live.path.exists()  # its maker, this process, lives
    assert not live.path.exists()
