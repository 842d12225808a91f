"""Issue 16: the containers of a killed orchestrator are found from its marker in /dev/shm and removed by the
next `duet` command; a live orchestrator's are left alone (no container engine needed: a stand-in records)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from duetbench.execute.container import ContainerEngine, forget_containers, note_container, sweep_stale_containers
from duetbench.execute.owner import process_start


def test_sweep_removes_only_a_dead_orchestrators_containers(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    engine = tmp_path / "engine"
    engine.write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\n")
    engine.chmod(0o755)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert process_start(dead.pid) is None
    (tmp_path / f"duetbench-containers-{dead.pid}-12345").write_text(f"{engine}\tduetbench-{dead.pid}-1-0-A\n"
                                                                       f"{engine}\tduetbench-{dead.pid}-1-0-B\n")
    note_container(ContainerEngine("podman", str(engine)), "mine-A", directory=str(tmp_path))  # this process: alive
    removed = sweep_stale_containers(str(tmp_path))
    assert removed == [f"duetbench-{dead.pid}-1-0-A", f"duetbench-{dead.pid}-1-0-B"]
    assert calls.read_text().split("\n")[:2] == [f"rm -f duetbench-{dead.pid}-1-0-A", f"rm -f duetbench-{dead.pid}-1-0-B"]
    assert not (tmp_path / f"duetbench-containers-{dead.pid}-12345").exists()
    mine = list(tmp_path.glob("duetbench-containers-*"))
    assert len(mine) == 1 and "mine-A" in mine[0].read_text()
    assert sweep_stale_containers(str(tmp_path)) == []
    forget_containers(str(tmp_path))
    assert not list(tmp_path.glob("duetbench-containers-*"))


def test_a_marker_naming_a_relative_program_is_not_run(tmp_path: Path) -> None:
    (tmp_path / "duetbench-containers-999999999-1").write_text("rm\t-rf\n")
    assert sweep_stale_containers(str(tmp_path)) == []
